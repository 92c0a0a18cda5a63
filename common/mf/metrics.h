// Prediction error on held-out ratings.
#ifndef FEDMF_COMMON_MF_METRICS_H_
#define FEDMF_COMMON_MF_METRICS_H_

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
// Combines per-party metrics weighted by their counts.
ErrorMetrics Combine(const std::vector<ErrorMetrics>& parts);

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_METRICS_H_
