#include "common/dp/internal/log_math.h"

#include <math.h>  // lgamma_r: std::lgamma writes the global signgam (a data race)

#include <algorithm>
#include <cmath>
#include <limits>

namespace fedmf::dp::internal {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double LogAbsGamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

}  // namespace

double LogAdd(double a, double b) {
  const double hi = std::max(a, b);
  const double lo = std::min(a, b);
  if (hi == kNegInf) return kNegInf;
  if (std::isinf(hi)) return hi;  // +inf absorbs everything
  return hi + std::log1p(std::exp(lo - hi));
}

double LogSumExp(const std::vector<double>& terms) {
  if (terms.empty()) return kNegInf;
  const double hi = *std::max_element(terms.begin(), terms.end());
  if (std::isinf(hi)) return hi;
  double sum = 0;
  for (double t : terms) sum += std::exp(t - hi);
  return hi + std::log(sum);
}

double LogErfc(double x) {
  // glibc's erfc keeps full relative precision until it underflows near
  // x = 26.5; switch a little earlier to the asymptotic series
  //   erfc(x) = exp(-x^2) / (x sqrt(pi)) * (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + 105/(16x^8) -
  //   ...)
  // whose truncation error at x >= 25 is below 1e-12 relative.
  if (x < 25) return std::log(std::erfc(x));
  const double inv2 = 1.0 / (x * x);
  const double series =
      1.0 + inv2 * (-0.5 + inv2 * (0.75 + inv2 * (-1.875 + inv2 * (6.5625 + inv2 * -29.53125))));
  return -x * x - std::log(x) - 0.5 * std::log(M_PI) + std::log(series);
}

double LogAbsBinomial(double n, double k) {
  return LogAbsGamma(n + 1) - LogAbsGamma(k + 1) - LogAbsGamma(n - k + 1);
}

}  // namespace fedmf::dp::internal
