// Prediction error on held-out ratings.
#ifndef FEDMF_COMMON_MF_METRICS_H_
#define FEDMF_COMMON_MF_METRICS_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "common/base/parallel_for.h"
#include "common/data/ratings.h"
#include "common/mf/embeddings.h"

namespace fedmf::mf {

struct ErrorMetrics {
  double mse = 0;
  double rmse = 0;
  double mae = 0;
  int64_t count = 0;
};

// Prediction <u_i, v_j>, clamped to the rating range.
double Predict(const Matrix& u, const Matrix& v, int32_t user, int32_t item,
               const data::RatingRange& range);
// The errors are summed in blocks of this many ratings, then the blocks'
// sums in order: the same result on any number of threads, and for up to one
// block (every ML-100K set, ML-1M's test set) the plain sequential sum.
// Evaluating the 4.77M training ratings of the central benchmark took 0.17 s
// on one thread, after 0.85 s of two-thread `--engine grid` training
// (docs/archive/benchmarks-2026.md).
inline constexpr size_t kEvaluateBlock = size_t{1} << 18;

// `threads` splits the blocks (a thread per block at most); the result does
// not depend on it.
ErrorMetrics Evaluate(const std::vector<data::Rating>& ratings, const Matrix& u, const Matrix& v,
                      const data::RatingRange& range, int threads = 1);
// The same metrics for any model: `predict(rating)` returns its prediction
// (already clamped where the model clamps); with threads > 1 it is called
// from several threads at once.
template <typename PredictFn>
ErrorMetrics EvaluateWith(const std::vector<data::Rating>& ratings, PredictFn predict,
                          int threads = 1) {
  ErrorMetrics m;
  if (ratings.empty()) return m;
  const size_t blocks = (ratings.size() + kEvaluateBlock - 1) / kEvaluateBlock;
  std::vector<std::pair<double, double>> block_sums(blocks);  // squared, absolute
  base::ParallelFor(blocks, threads, [&](size_t b) {
    double sq = 0;
    double abs = 0;
    const size_t end = std::min(ratings.size(), (b + 1) * kEvaluateBlock);
    for (size_t i = b * kEvaluateBlock; i < end; ++i) {
      const double err = static_cast<double>(ratings[i].value) - predict(ratings[i]);
      sq += err * err;
      abs += err < 0 ? -err : err;
    }
    block_sums[b] = {sq, abs};
  });
  double sum_sq = 0;
  double sum_abs = 0;
  for (const auto& [sq, abs] : block_sums) {
    sum_sq += sq;
    sum_abs += abs;
  }
  m.count = static_cast<int64_t>(ratings.size());
  m.mse = sum_sq / static_cast<double>(m.count);
  m.rmse = std::sqrt(m.mse);
  m.mae = sum_abs / static_cast<double>(m.count);
  return m;
}
// Combines per-party metrics weighted by their counts.
ErrorMetrics Combine(const std::vector<ErrorMetrics>& parts);

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_METRICS_H_
