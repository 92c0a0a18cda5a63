#include "common/dp/snapping.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace fedmf::dp {
namespace {

[[noreturn]] void Fatal(const char* what, double value) {
  std::fprintf(stderr, "fedmf: fatal DP snapping error: %s (got %g)\n", what, value);
  std::abort();
}

// 2^floor(log2 x) for finite x > 0, exactly (frexp gives x = f 2^e, f in [0.5, 1)).
int FloorLog2(double x) {
  int e = 0;
  std::frexp(x, &e);
  return e - 1;
}

// std::trunc without the libm call (the baseline x86-64 target has no
// roundsd, so trunc is a call per element): below 2^52 in magnitude the int64
// conversion truncates exactly and copysign restores trunc's signed zero;
// larger values are integers already, and inf and NaN pass through as trunc
// leaves them.
inline double TruncExact(double y) {
  if (!(std::fabs(y) < 0x1p52)) return y;
  return std::copysign(static_cast<double>(static_cast<int64_t>(y)), y);
}

}  // namespace

double SnapGranularity(double noise_sd, double magnitude_bound) {
  if (!(noise_sd > 0) || !std::isfinite(noise_sd))
    Fatal("noise_sd must be finite and > 0", noise_sd);
  if (!(magnitude_bound > 0) || !std::isfinite(magnitude_bound)) {
    Fatal("magnitude_bound must be finite and > 0", magnitude_bound);
  }
  const int from_noise = FloorLog2(noise_sd) - kSnapBitsBelowNoise;
  const int from_ulps = FloorLog2(magnitude_bound) - 52 + kSnapUlpsMargin;
  return std::ldexp(1.0, from_noise > from_ulps ? from_noise : from_ulps);
}

double SnapTowardZero(double x, double granularity) {
  // x / granularity and the product are exact (powers of two, no overflow
  // for released magnitudes); trunc is exact.
  return TruncExact(x / granularity) * granularity;
}

double SnapInBinadeTowardZero(double x, double noise_sd) {
  if (!std::isfinite(x)) Fatal("a snapped release must be finite", x);
  if (x == 0) return 0;
  return SnapTowardZero(x, SnapGranularity(noise_sd, std::fabs(x)));
}

void SnapInBinadeTowardZero(double* x, size_t n, double noise_sd) {
  for (size_t k = 0; k < n; ++k) x[k] = SnapInBinadeTowardZero(x[k], noise_sd);
}

void SnapTowardZero(double* x, size_t n, double granularity) {
  // A power-of-two granularity (what SnapGranularity returns) has an exact
  // reciprocal, and x * (1/g) is then the same correctly rounded number as
  // x / g: multiply, the divider is the slow part of the loop.
  // (Below 2^-1023 the reciprocal overflows: divide.)
  int exponent = 0;
  const double inverse = 1.0 / granularity;
  if (std::isfinite(granularity) && std::isfinite(inverse) &&
      std::frexp(granularity, &exponent) == 0.5) {
    for (size_t k = 0; k < n; ++k) x[k] = TruncExact(x[k] * inverse) * granularity;
    return;
  }
  for (size_t k = 0; k < n; ++k) x[k] = SnapTowardZero(x[k], granularity);
}

}  // namespace fedmf::dp
