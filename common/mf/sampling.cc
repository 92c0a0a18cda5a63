#include "common/mf/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace fedmf::mf {
namespace {

// Below this rate PoissonSampleRows jumps between selected rows with
// geometric gaps (one log per selected row) instead of drawing one uniform
// per row; at the FMF paper's eta = 0.01 that is ~100x fewer draws.
constexpr double kGeometricSkipBelow = 0.125;

}  // namespace

RatingMatrix RandomTrim(const RatingMatrix& x, int32_t theta, random::Csprng& rng) {
  if (theta < 1) {
    std::fprintf(stderr, "fedmf: RandomTrim needs theta >= 1, got %d\n", theta);
    std::abort();
  }
  std::vector<data::Rating> kept;
  kept.reserve(
      static_cast<size_t>(std::min<int64_t>(x.nnz(), static_cast<int64_t>(theta) * x.num_users())));
  std::vector<int32_t> idx;
  for (int32_t user = 0; user < x.num_users(); ++user) {
    const auto row = x.Row(user);
    const int32_t k = static_cast<int32_t>(row.size());
    if (k <= theta) {
      // Small rows are kept whole and draw no randomness, so the stream
      // consumed depends only on the (public after trimming) row sizes.
      for (const auto& e : row) kept.push_back(data::Rating{user, e.item, e.value});
      continue;
    }
    // Partial Fisher-Yates: the first theta slots become a uniformly random
    // theta-subset. UniformInt is exactly uniform (rejection), so is the subset.
    idx.resize(static_cast<size_t>(k));
    std::iota(idx.begin(), idx.end(), 0);
    for (int32_t t = 0; t < theta; ++t) {
      const int32_t j = t + static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(k - t)));
      std::swap(idx[t], idx[j]);
    }
    // Keep the survivors in their original order: the output then depends on
    // which ratings survived, not on the order they were drawn in.
    std::sort(idx.begin(), idx.begin() + theta);
    for (int32_t t = 0; t < theta; ++t) {
      const auto& e = row[static_cast<size_t>(idx[t])];
      kept.push_back(data::Rating{user, e.item, e.value});
    }
  }
  return RatingMatrix(x.num_users(), x.num_items(), kept);
}

std::vector<int32_t> PoissonSampleRows(int32_t n, double q, random::Csprng& rng) {
  std::vector<int32_t> out;
  if (n <= 0 || !(q > 0)) return out;  // also rejects NaN
  if (q >= 1) {
    out.resize(static_cast<size_t>(n));
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  out.reserve(static_cast<size_t>(q * n + 4 * std::sqrt(q * n) + 8));
  if (q >= kGeometricSkipBelow) {
    for (int32_t i = 0; i < n; ++i) {
      if (rng.NextDouble() < q) out.push_back(i);
    }
    return out;
  }
  // The gap G (rows skipped before the next selected one) of independent
  // Bernoulli(q) trials is Geometric: P(G >= k) = (1-q)^k. With U uniform on
  // (0,1), floor(log U / log(1-q)) has exactly that law, because
  // G >= k <=> U <= (1-q)^k. So the selected set has the same distribution as
  // per-row coin flips (up to the 2^-53 resolution both methods share).
  const double log1m_q = std::log1p(-q);
  int64_t pos = 0;
  while (true) {
    const double gap = std::floor(std::log(rng.NextOpenDouble()) / log1m_q);
    // Compare in double first: gap can be astronomically large for tiny q.
    if (gap >= static_cast<double>(n - pos)) break;
    pos += static_cast<int64_t>(gap);
    out.push_back(static_cast<int32_t>(pos));
    ++pos;
    if (pos >= n) break;
  }
  return out;
}

}  // namespace fedmf::mf
