// Noise samplers for the DP mechanisms.
//
// Gaussian method. A 256-layer Ziggurat (Marsaglia & Tsang 2000) in the form
// Doornik (2005, "An improved Ziggurat method", ZIGNOR) recommends: each draw
// takes one 64-bit word from the AES-256-CTR keystream and splits it into
// disjoint fields -- 8 bits choose the layer, 1 bit the sign, 53 bits the
// uniform -- so the layer and the abscissa are independent (the flaw Doornik
// found in the original, which reused the same bits for both). About 99% of
// draws end in the rectangle test; the rest use a wedge test against
// exp(-x^2/2) with a fresh 53-bit uniform, and the base layer's overflow goes
// to Marsaglia's (1964) exact tail method beyond r = 3.654. FillGaussian pulls
// the keystream in 2 KiB blocks (Csprng::FillBytes) so the per-sample cost is
// a table lookup, a multiply and a compare. Laplace, exponential and gamma
// use inversion / Marsaglia-Tsang on the same 53-bit uniforms.
//
// Floating-point caveat (Mironov, "On significance of the least significant
// bits for differential privacy", CCS 2012). A DP proof is about real-valued
// noise; a sampler that produces doubles has a finite, irregular support.
// Mironov showed that for textbook Laplace sampling (-b*log(U) on a
// floating-point U) the set of doubles reachable as "value + noise" depends on
// the value, so some outputs are possible under one database and impossible
// under its neighbour: an attacker can distinguish them with certainty and
// the epsilon guarantee is void, no matter how large the noise. The same holds
// in principle for any floating-point Gaussian sampler, the Ziggurat included
// (its outputs are u * x[layer] on a 2^-53 grid scaled per layer, plus
// rounding in the addition).
// What we do: all randomness comes from a CSPRNG (no predictable or
// low-quality generator, no bias from a weak seed), uniforms carry the full
// 53 bits of a double's mantissa, and the layer/sign/uniform bits never
// overlap. What remains: the support of value + noise is still a
// value-dependent set of doubles; its effect is confined to the last bits of
// each output and is far below the noise scale, but it is NOT covered by the
// (epsilon, delta) accounting, and an adversary who sees full-precision
// outputs could in principle exploit it. The remedy is a discrete / snapped
// sampler: round the value to a granularity grid, add noise drawn exactly on
// that grid (e.g. a discrete Gaussian, Canonne-Kamath-Steinke 2020, or the
// binomial-based approximation Google's differential-privacy library uses
// for its Gaussian mechanism), and account for the rounding in the
// sensitivity. Until then, callers that publish noised values should not
// publish more precision than they need.
#include "common/dp/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/dp/internal/gaussian_ziggurat.h"

namespace fedmf::dp {
namespace {

constexpr double kTwoPow53Inv = 0x1.0p-53;

[[noreturn]] void Fatal(const char* what, double value) {
  std::fprintf(stderr, "fedmf: fatal DP noise error: %s (got %g)\n", what, value);
  std::abort();
}

void CheckNonNegativeScale(const char* what, double s) {
  if (!(s >= 0) || !std::isfinite(s)) Fatal(what, s);
}

void CheckPositive(const char* what, double s) {
  if (!(s > 0) || !std::isfinite(s)) Fatal(what, s);
}

// Open uniform in (0,1) from the top 53 bits of a word: safe for log().
inline double OpenUniform(uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) * kTwoPow53Inv;
}

// Keystream in blocks: one FillBytes call per up to 256 words keeps the
// Csprng's per-call overhead off the per-sample path. Blocks are sized to the
// request (plus ~2% for wedge/tail rejections) so a short vector does not burn
// 2 KiB of keystream. Unused words are dropped; every word is independent
// keystream, so that costs nothing but bytes.
class BulkBits {
 public:
  BulkBits(Csprng& rng, size_t expected_words)
      : rng_(rng),
        block_(std::clamp<size_t>(expected_words + expected_words / 50 + 4, 4, kWords)) {}
  uint64_t operator()() {
    if (pos_ == end_) {
      rng_.FillBytes(reinterpret_cast<uint8_t*>(buf_), block_ * sizeof(uint64_t));
      pos_ = 0;
      end_ = block_;
    }
    return buf_[pos_++];
  }

 private:
  static constexpr size_t kWords = 256;
  Csprng& rng_;
  const size_t block_;
  uint64_t buf_[kWords];
  size_t pos_ = 0, end_ = 0;
};

// The shared loop of FillGaussian / AddGaussian.
template <typename Store>
void GenerateGaussian(Csprng& rng, double sigma, double* out, size_t n, Store store) {
  const internal::ZigguratTables& tables = internal::GetZigguratTables();
  BulkBits bits(rng, n);
  for (size_t i = 0; i < n; ++i) store(out[i], sigma * internal::ZigguratNormal(tables, bits));
}

double StandardNormal(Csprng& rng) {
  auto next = [&rng] { return rng.NextU64(); };
  return internal::ZigguratNormal(internal::GetZigguratTables(), next);
}

// Gamma(k, 1), Marsaglia & Tsang (2000), "A simple method for generating
// gamma variables". For k < 1 the method needs d = k - 1/3 > 0, so draw
// Gamma(k+1) and scale by U^(1/k) (their boosting identity).
double StandardGamma(Csprng& rng, double k) {
  if (k < 1) {
    const double g = StandardGamma(rng, k + 1);
    return g * std::exp(std::log(rng.NextOpenDouble()) / k);
  }
  const double d = k - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = StandardNormal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.NextOpenDouble();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v;  // cheap squeeze
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v;
  }
}

}  // namespace

double SampleGaussian(Csprng& rng, double sigma) {
  CheckNonNegativeScale("Gaussian sigma must be finite and >= 0", sigma);
  return sigma * StandardNormal(rng);
}

void FillGaussian(Csprng& rng, double sigma, double* out, size_t n) {
  CheckNonNegativeScale("Gaussian sigma must be finite and >= 0", sigma);
  GenerateGaussian(rng, sigma, out, n, [](double& slot, double z) { slot = z; });
}

void AddGaussian(Csprng& rng, double sigma, double* out, size_t n) {
  CheckNonNegativeScale("Gaussian sigma must be finite and >= 0", sigma);
  GenerateGaussian(rng, sigma, out, n, [](double& slot, double z) { slot += z; });
}

double SampleLaplace(Csprng& rng, double b) {
  CheckNonNegativeScale("Laplace scale b must be finite and >= 0", b);
  // Sign from bit 0, magnitude Exp(1/b) by inversion from bits 11..63.
  const uint64_t bits = rng.NextU64();
  const double magnitude = -b * std::log(OpenUniform(bits));
  return (bits & 1) ? -magnitude : magnitude;
}

double SampleExponential(Csprng& rng, double lambda) {
  CheckPositive("exponential rate lambda must be finite and > 0", lambda);
  return -std::log(rng.NextOpenDouble()) / lambda;
}

double SampleGamma(Csprng& rng, double shape, double scale) {
  CheckPositive("gamma shape must be finite and > 0", shape);
  CheckNonNegativeScale("gamma scale must be finite and >= 0", scale);
  return scale * StandardGamma(rng, shape);
}

std::vector<double> SampleGammaNormVector(Csprng& rng, int d, double scale) {
  if (d < 1) Fatal("gamma-norm vector dimension must be >= 1", d);
  CheckNonNegativeScale("gamma-norm vector scale must be finite and >= 0", scale);
  std::vector<double> v(static_cast<size_t>(d));
  // Direction: a standard Gaussian vector is rotation invariant, so its
  // normalisation is uniform on the sphere. A zero vector has probability 0
  // but would divide by zero, so redraw.
  double norm2 = 0;
  while (norm2 == 0) {
    FillGaussian(rng, 1.0, v.data(), v.size());
    norm2 = 0;
    for (double x : v) norm2 += x * x;
  }
  // Density ∝ exp(-||x||/scale) in R^d: the radius has density
  // ∝ r^(d-1) exp(-r/scale), i.e. Gamma(d, scale).
  const double radius = scale * StandardGamma(rng, d);
  const double factor = radius / std::sqrt(norm2);
  for (double& x : v) x *= factor;
  return v;
}

}  // namespace fedmf::dp
