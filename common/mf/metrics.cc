#include "common/mf/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fedmf::mf {

double Predict(const Matrix& u, const Matrix& v, int32_t user, int32_t item,
               const data::RatingRange& range) {
  if (user < 0 || user >= u.rows() || item < 0 || item >= v.rows() || u.cols() != v.cols()) {
    std::fprintf(stderr, "fedmf: Predict(%d, %d) out of range\n", user, item);
    std::abort();
  }
  // Clamping is free accuracy: the truth is known to lie in the range.
  return std::clamp(u.row(user).dot(v.row(item)), range.min, range.max);
}

ErrorMetrics Evaluate(const std::vector<data::Rating>& ratings, const Matrix& u, const Matrix& v,
                      const data::RatingRange& range, int threads) {
  return EvaluateWith(
      ratings, [&](const data::Rating& r) { return Predict(u, v, r.user, r.item, range); },
      threads);
}

ErrorMetrics Combine(const std::vector<ErrorMetrics>& parts) {
  ErrorMetrics out;
  double sum_sq = 0;
  double sum_abs = 0;
  for (const ErrorMetrics& p : parts) {
    if (p.count <= 0) continue;
    sum_sq += p.mse * static_cast<double>(p.count);
    sum_abs += p.mae * static_cast<double>(p.count);
    out.count += p.count;
  }
  if (out.count == 0) return out;
  out.mse = sum_sq / static_cast<double>(out.count);
  // RMSE does not average linearly; it is recomputed from the pooled MSE.
  out.rmse = std::sqrt(out.mse);
  out.mae = sum_abs / static_cast<double>(out.count);
  return out;
}

}  // namespace fedmf::mf
