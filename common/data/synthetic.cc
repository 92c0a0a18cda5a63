// The synthetic rating generator (see synthetic.h for the model).
#include "common/data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/data/internal/synthetic_sampling.h"
#include "common/random/csprng.h"

namespace fedmf::data {
namespace {

using random::Csprng;

// Concentration of the users' topic mixtures: well below 1, so most users
// care mainly about one or two of the `rank` topics. That is what gives the
// ratings a large user-item interaction (variance) for MF to explain rather
// than a flat average.
constexpr double kUserTopicConcentration = 0.3;
// Items' per-topic scores are Beta(0.5, 0.5): U-shaped, so an item is usually
// clearly good or clearly bad for a topic. Together with the value above this
// puts the rating variance near MovieLens' (~1.3).
constexpr double kItemScoreShape = 0.5;

// More than this many ratings is a typo (and would not fit the int32 ids).
constexpr int64_t kMaxRatings = int64_t{1} << 30;

}  // namespace

absl::Status ValidateSyntheticOptions(const SyntheticOptions& o) {
  auto bad = [](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (o.num_users < 1) return bad("synthetic users=", o.num_users, " must be at least 1");
  if (o.num_items < 1) return bad("synthetic items=", o.num_items, " must be at least 1");
  if (o.rank < 1) return bad("synthetic rank=", o.rank, " must be at least 1");
  if (!(o.density > 0.0 && o.density <= 1.0)) {
    return bad("synthetic density=", o.density, " must be in (0, 1]");
  }
  if (!std::isfinite(o.noise) || o.noise < 0.0) {
    return bad("synthetic noise=", o.noise, " must be a finite value >= 0");
  }
  if (!std::isfinite(o.range.min) || !std::isfinite(o.range.max) || !(o.range.min < o.range.max)) {
    return bad("synthetic rating range min=", o.range.min, ", max=", o.range.max,
               " is invalid: need finite min < max");
  }
  const int64_t n = o.num_users, m = o.num_items;
  const int64_t target = SyntheticRatingCount(o);
  if (target < std::max(n, m)) {
    return bad("synthetic density=", o.density, " gives ", target, " ratings for ", n, " users x ",
               m, " items, but every user and item needs one: use density >= ",
               static_cast<double>(std::max(n, m)) / static_cast<double>(n * m));
  }
  if (target > kMaxRatings) {
    return bad("synthetic dataset would have ", target, " ratings (max ", kMaxRatings,
               "): lower users, items or density");
  }
  return absl::OkStatus();
}

int64_t SyntheticRatingCount(const SyntheticOptions& o) {
  return std::llround(o.density * static_cast<double>(o.num_users) *
                      static_cast<double>(o.num_items));
}

absl::StatusOr<Dataset> GenerateSynthetic(const SyntheticOptions& options) {
  RETURN_IF_ERROR(ValidateSyntheticOptions(options));
  const int32_t n = options.num_users, m = options.num_items, k = options.rank;
  const Csprng root = Csprng::FromSeed(options.seed);

  // User topic mixtures a_i (Dirichlet, sum 1) and item topic scores b_j in
  // [0,1]^k (Beta). The noiseless rating min + (max-min)<a_i, b_j> equals
  // <a_i, min*1 + (max-min) b_j>: a rank-k product of non-negative factors
  // (for min >= 0) that spans the whole range.
  Csprng user_rng = root.Fork("synthetic/users");
  std::vector<double> a(static_cast<size_t>(n) * k);
  for (int32_t i = 0; i < n; ++i) {
    internal::SampleDirichlet(user_rng, kUserTopicConcentration, &a[static_cast<size_t>(i) * k], k);
  }
  Csprng item_rng = root.Fork("synthetic/items");
  std::vector<double> b(static_cast<size_t>(m) * k);
  for (double& x : b) x = internal::SampleBeta(item_rng, kItemScoreShape, kItemScoreShape);

  Csprng pair_rng = root.Fork("synthetic/pairs");
  Csprng noise_rng = root.Fork("synthetic/noise");
  const double lo = options.range.min, hi = options.range.max;
  Dataset d;
  d.num_users = n;
  d.num_items = m;
  d.range = options.range;
  auto rate = [&](const auto& pairs) {
    d.ratings.reserve(pairs.size());
    for (uint64_t key : pairs) {
      const auto u = static_cast<int32_t>(key / static_cast<uint64_t>(m));
      const auto j = static_cast<int32_t>(key % static_cast<uint64_t>(m));
      const double* au = &a[static_cast<size_t>(u) * k];
      const double* bj = &b[static_cast<size_t>(j) * k];
      const double affinity = std::inner_product(au, au + k, bj, 0.0);
      double x = lo + (hi - lo) * affinity + options.noise * internal::SampleNormal(noise_rng);
      // Integer ratings like MovieLens' stars; clamping keeps them in range.
      x = std::clamp(std::round(x), lo, hi);
      d.ratings.push_back(Rating{u, j, static_cast<float>(x)});
    }
  };
  // 32-bit pair keys where they fit (every MovieLens-sized set): the pairs
  // and the ratings made from them are alive together, so this is the peak.
  if (static_cast<uint64_t>(n) * static_cast<uint64_t>(m) <= (uint64_t{1} << 32)) {
    rate(internal::SampleCoveringPairs32(n, m, SyntheticRatingCount(options), pair_rng));
  } else {
    rate(internal::SampleCoveringPairs(n, m, SyntheticRatingCount(options), pair_rng));
  }
  d.user_ids.reserve(n);
  for (int32_t i = 0; i < n; ++i) d.user_ids.push_back(std::to_string(i));
  d.item_ids.reserve(m);
  for (int32_t j = 0; j < m; ++j) d.item_ids.push_back(std::to_string(j));
  d.source = absl::StrCat("synthetic:", FormatSyntheticOptions(options));
  return d;
}

}  // namespace fedmf::data
