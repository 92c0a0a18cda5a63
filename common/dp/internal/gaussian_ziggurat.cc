#include "common/dp/internal/gaussian_ziggurat.h"

#include <cmath>

namespace fedmf::dp::internal {
namespace {

// r for 256 layers (Marsaglia & Tsang 2000): the unique tail start for which
// 256 equal-area layers exactly cover the half-normal. The area v is derived
// from r below rather than hard-coded, so the two can never disagree.
constexpr double kTailStart = 3.6541528853610088;

ZigguratTables Build() {
  ZigguratTables t;
  const double r = kTailStart;
  const double fr = std::exp(-0.5 * r * r);
  t.r = r;
  // Base strip: rectangle [0,r] x [0,f(r)] plus the tail integral beyond r.
  t.v = r * fr + std::sqrt(M_PI / 2) * std::erfc(r / std::sqrt(2.0));
  t.x[0] = t.v / fr;
  t.x[1] = r;
  for (int i = 1; i < kZigLayers - 1; ++i) {
    // Next layer edge: f(x[i+1]) = f(x[i]) + v / x[i].
    t.x[i + 1] = std::sqrt(-2.0 * std::log(t.v / t.x[i] + std::exp(-0.5 * t.x[i] * t.x[i])));
  }
  t.x[kZigLayers] = 0;
  for (int i = 0; i <= kZigLayers; ++i) t.f[i] = std::exp(-0.5 * t.x[i] * t.x[i]);
  for (int i = 0; i < kZigLayers; ++i) t.ratio[i] = t.x[i + 1] / t.x[i];
  return t;
}

}  // namespace

const ZigguratTables& GetZigguratTables() {
  static const ZigguratTables tables = Build();  // thread-safe static init
  return tables;
}

}  // namespace fedmf::dp::internal
