#include "common/dp/snapping.h"

#include <cmath>
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
  return std::trunc(x / granularity) * granularity;
}

void SnapTowardZero(double* x, size_t n, double granularity) {
  for (size_t k = 0; k < n; ++k) x[k] = SnapTowardZero(x[k], granularity);
}

}  // namespace fedmf::dp
