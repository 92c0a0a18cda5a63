#include "common/hua/error_cdf.h"

#include <algorithm>
#include <cmath>

#include "common/mf/metrics.h"

namespace fedmf::hua {

ErrorCdf ComputeErrorCdf(const std::vector<data::Rating>& ratings, const mf::Matrix& u,
                         const mf::Matrix& v, const data::RatingRange& range) {
  ErrorCdf cdf;
  cdf.levels = {0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99};
  cdf.thresholds = {0.25, 0.5, 1.0, 1.5, 2.0, 3.0};
  cdf.quantiles.assign(cdf.levels.size(), 0.0);
  cdf.fractions.assign(cdf.thresholds.size(), 0.0);
  if (ratings.empty()) return cdf;
  std::vector<double> err;
  err.reserve(ratings.size());
  for (const data::Rating& r : ratings) {
    err.push_back(std::abs(r.value - mf::Predict(u, v, r.user, r.item, range)));
  }
  std::sort(err.begin(), err.end());
  const double n = static_cast<double>(err.size());
  for (size_t k = 0; k < cdf.levels.size(); ++k) {
    const auto rank = static_cast<size_t>(std::ceil(cdf.levels[k] * n));
    cdf.quantiles[k] = err[std::clamp<size_t>(rank, 1, err.size()) - 1];
  }
  for (size_t k = 0; k < cdf.thresholds.size(); ++k) {
    const auto below = std::upper_bound(err.begin(), err.end(), cdf.thresholds[k]) - err.begin();
    cdf.fractions[k] = static_cast<double>(below) / n;
  }
  return cdf;
}

}  // namespace fedmf::hua
