// Internal: the 256-layer Ziggurat for the standard normal (Marsaglia & Tsang
// 2000, with Doornik's 2005 ZIGNOR correction: the layer index and the
// uniform come from disjoint bits, and the uniform has 53 bits). Callers use
// SampleGaussian / FillGaussian in noise.h; this header exists so that the
// samplers and the tests can share the tables.
#ifndef FEDMF_COMMON_DP_INTERNAL_GAUSSIAN_ZIGGURAT_H_
#define FEDMF_COMMON_DP_INTERNAL_GAUSSIAN_ZIGGURAT_H_

#include <bit>
#include <cmath>
#include <cstdint>

namespace fedmf::dp::internal {

inline constexpr int kZigLayers = 256;

// Layer geometry for f(x) = exp(-x^2/2) on x >= 0 (the unnormalised
// half-normal). Layer 0 is the base strip [0, r] x [0, f(r)] plus the tail
// beyond r, drawn as a rectangle of virtual width x[0] = v / f(r); layer i
// (1..255) is [0, x[i]] x [f(x[i]), f(x[i+1])]. Every layer has area v.
struct ZigguratTables {
  double r = 0;                   // start of the tail, x[1]
  double v = 0;                   // common layer area
  double x[kZigLayers + 1] = {};  // x[256] = 0
  double ratio[kZigLayers] = {};  // x[i+1] / x[i]: below it, the point is inside f
  double f[kZigLayers + 1] = {};  // f(x[i])
};

const ZigguratTables& GetZigguratTables();

// x with its sign bit XORed by `sign_bit` (0 or 1 << 63): for x >= 0 exactly
// `sign_bit ? -x : x`, without the branch. The sign is a fair coin per draw,
// so a branch on it mispredicts half the time (3 of the 9 ns a draw took).
inline double WithSign(double x, uint64_t sign_bit) {
  return std::bit_cast<double>(std::bit_cast<uint64_t>(x) ^ sign_bit);
}

// One N(0,1) draw. `next_bits` returns uniformly random 64-bit words; the fast
// path (about 99% of draws) uses exactly one word.
template <typename NextBits>
inline double ZigguratNormal(const ZigguratTables& t, NextBits& next_bits) {
  constexpr double kTwoPow53Inv = 0x1.0p-53;
  for (;;) {
    const uint64_t bits = next_bits();
    const unsigned layer = static_cast<unsigned>(bits & 0xFF);  // bits 0..7
    const uint64_t sign_bit = ((bits >> 8) & 1) << 63;          // bit 8
    // Bits 11..63: an open uniform in (0,1) independent of layer and sign.
    const double u = (static_cast<double>(bits >> 11) + 0.5) * kTwoPow53Inv;
    const double x = u * t.x[layer];
    if (u < t.ratio[layer]) return WithSign(x, sign_bit);  // inside the rectangle core
    if (layer == 0) {
      // Tail beyond r (Marsaglia 1964): a ~ Exp(r) conditioned by b.
      double a, b;
      do {
        a = -std::log((static_cast<double>(next_bits() >> 11) + 0.5) * kTwoPow53Inv) / t.r;
        b = -std::log((static_cast<double>(next_bits() >> 11) + 0.5) * kTwoPow53Inv);
      } while (b + b < a * a);
      return WithSign(t.r + a, sign_bit);
    }
    // Wedge: a uniform height inside the layer, accepted under the curve.
    const double h = static_cast<double>(next_bits() >> 11) * kTwoPow53Inv;
    const double y = t.f[layer] + h * (t.f[layer + 1] - t.f[layer]);
    if (y < std::exp(-0.5 * x * x)) return WithSign(x, sign_bit);
  }
}

}  // namespace fedmf::dp::internal

#endif  // FEDMF_COMMON_DP_INTERNAL_GAUSSIAN_ZIGGURAT_H_
