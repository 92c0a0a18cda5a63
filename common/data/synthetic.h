// The embedded default dataset: low-rank non-negative factors plus noise,
// quantized to the rating range. Demos and tests that must not depend on
// ../shared use it.
#ifndef FEDMF_COMMON_DATA_SYNTHETIC_H_
#define FEDMF_COMMON_DATA_SYNTHETIC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"

namespace fedmf::data {

struct SyntheticOptions {
  int32_t num_users = 600;
  int32_t num_items = 400;
  double density = 0.05;  // fraction of (user, item) pairs observed
  int32_t rank = 5;
  double noise = 0.5;     // std-dev of Gaussian noise before quantization
  RatingRange range{1.0, 5.0};
  uint64_t seed = 42;
};

// Parses "key=value,key=value" (keys: users, items, density, rank, noise,
// min, max, seed). Unknown keys and bad values are errors naming the key.
absl::StatusOr<SyntheticOptions> ParseSyntheticOptions(const std::string& kv);

// Deterministic in `options.seed`. Every user and item has at least one rating.
absl::StatusOr<Dataset> GenerateSynthetic(const SyntheticOptions& options);

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_SYNTHETIC_H_
