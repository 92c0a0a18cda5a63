// Prediction error on held-out ratings.
#ifndef FEDMF_COMMON_MF_METRICS_H_
#define FEDMF_COMMON_MF_METRICS_H_

#include <cmath>
#include <vector>

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
ErrorMetrics Evaluate(const std::vector<data::Rating>& ratings, const Matrix& u, const Matrix& v,
                      const data::RatingRange& range);
// The same metrics for any model: `predict(rating)` returns its prediction
// (already clamped where the model clamps).
template <typename PredictFn>
ErrorMetrics EvaluateWith(const std::vector<data::Rating>& ratings, PredictFn predict) {
  ErrorMetrics m;
  if (ratings.empty()) return m;
  double sum_sq = 0;
  double sum_abs = 0;
  for (const data::Rating& r : ratings) {
    const double err = static_cast<double>(r.value) - predict(r);
    sum_sq += err * err;
    sum_abs += err < 0 ? -err : err;
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
