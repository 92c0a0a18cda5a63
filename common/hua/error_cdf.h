// The paper's accuracy view: the distribution of |r'_ij - r_ij| (Figures 1-6).
#ifndef FEDMF_COMMON_HUA_ERROR_CDF_H_
#define FEDMF_COMMON_HUA_ERROR_CDF_H_

#include <vector>

#include "common/data/ratings.h"
#include "common/mf/embeddings.h"

namespace fedmf::hua {

struct ErrorCdf {
  std::vector<double> levels;      // quantile levels q
  std::vector<double> quantiles;   // |error| at level q (nearest rank)
  std::vector<double> thresholds;  // x
  std::vector<double> fractions;   // P(|error| <= x)
};

// Over `ratings` with mf::Predict (clamped to `range`). Levels 0.1, 0.25,
// 0.5, 0.75, 0.9, 0.95, 0.99; thresholds 0.25, 0.5, 1, 1.5, 2, 3. Empty
// ratings give zeros.
ErrorCdf ComputeErrorCdf(const std::vector<data::Rating>& ratings, const mf::Matrix& u,
                         const mf::Matrix& v, const data::RatingRange& range);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_ERROR_CDF_H_
