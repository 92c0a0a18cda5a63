// The embedded default dataset: low-rank non-negative factors plus noise,
// quantized to the rating range. Demos and tests that must not depend on an
// external dataset (MovieLens) use it.
//
// Model (deterministic in `seed`):
//   a_i ~ Dirichlet(0.3) over `rank` topics  (user i's taste: mostly 1-2 topics)
//   b_j ~ Beta(0.5, 0.5)^rank                (item j's appeal to each topic)
//   x_ij = round(min + (max-min) <a_i, b_j> + noise * N(0,1)), clamped to [min, max]
// min + (max-min)<a_i,b_j> = <a_i, min + (max-min) b_j> is a rank-`rank`
// product of non-negative factors spanning [min, max]. Exactly
// round(density * users * items) distinct pairs are observed, uniformly at
// random except that every user and every item gets at least one rating.
//
// With the defaults (600 users, 400 items, density 0.1 -> 24,000 ratings, i.e.
// 40 per user and 60 per item; rank 5, noise 0.5, ratings 1..5) the rating
// variance is about 1.3 (MovieLens 100K: 1.27), of which the rank-5 signal
// explains about 75% (the rest is noise and rounding). A plain rank-5 SGD MF
// reaches a test MSE of about 0.4 against 1.3 for the global mean. (At density
// 0.05 users have too few ratings for MF to get below ~0.7.)
#ifndef FEDMF_COMMON_DATA_SYNTHETIC_H_
#define FEDMF_COMMON_DATA_SYNTHETIC_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/ratings.h"

namespace fedmf::data {

struct SyntheticOptions {
  int32_t num_users = 600;      // key users
  int32_t num_items = 400;      // key items
  double density = 0.1;         // key density: fraction of (user, item) pairs observed, (0, 1]
  int32_t rank = 5;             // key rank: number of latent topics
  double noise = 0.5;           // key noise: std-dev of Gaussian noise before quantization
  RatingRange range{1.0, 5.0};  // keys min, max
  uint64_t seed = 42;           // key seed
};

// Parses "key=value,key=value" (keys: users, items, density, rank, noise,
// min, max, seed); "" gives the defaults. Unknown keys and bad values are
// errors naming the key; the result is validated as below.
absl::StatusOr<SyntheticOptions> ParseSyntheticOptions(const std::string& kv);
// The inverse of ParseSyntheticOptions (all keys, doubles round-trip exactly).
std::string FormatSyntheticOptions(const SyntheticOptions& options);

// Sizes >= 1, density in (0, 1], noise >= 0, finite min < max, and enough
// ratings (round(density*users*items) >= max(users, items)) to cover everyone.
absl::Status ValidateSyntheticOptions(const SyntheticOptions& options);
// round(density * users * items): the exact number of ratings generated.
int64_t SyntheticRatingCount(const SyntheticOptions& options);

// Deterministic in `options.seed`. Every user and item has at least one rating.
// Ratings are sorted by (user, item); ids are the decimal dense indices.
// source = "synthetic:" + FormatSyntheticOptions(options).
absl::StatusOr<Dataset> GenerateSynthetic(const SyntheticOptions& options);

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_SYNTHETIC_H_
