// Fixed-point encoding of real vectors into Z_{2^k} (uint64 storage), the
// input space of secure aggregation.
//
//   encode(x) = round(x * 2^f) mod 2^k     (two's complement, round half away
//                                           from zero)
//   decode(v) = signed_k(v) / 2^f          (v read as a k-bit two's-complement
//                                           integer)
//
// Decoding a SUM is exact (equal to the sum of the rounded inputs) as long as
// the true integer sum lies in [-2^{k-1}, 2^{k-1}). With at most N summands,
// each |x| <= B, every encoded magnitude is <= M = ceil(B * 2^f), so Create()
// requires
//                        N * M  <  2^{k-1}          (no wrap-around, ever)
// and Encode() rejects |x| > B and non-finite x. Callers choose B from their
// clipping bound; for Gaussian noise, clip the tail at a documented bound
// (e.g. 8 sigma) before encoding, and include it in B.
// Precision: the rounding error of a decoded sum is at most N * 2^{-f-1}.
#ifndef FEDMF_COMMON_CRYPTO_FIXED_POINT_H_
#define FEDMF_COMMON_CRYPTO_FIXED_POINT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/mod2k.h"  // AddMod2k / SubMod2k for sums of encodings

namespace fedmf::crypto {

// std::llround for |y| < 2^63, without the libm call: truncate, then step
// away from zero when the fractional part (y - trunc(y), exact) is at least
// one half. Defined here so the test can compare it with llround.
// Branch-free: the step's direction is as random as the data, so a branch on
// it would mispredict about every other value.
inline int64_t RoundHalfAwayFromZero(double y) {
  const int64_t q = static_cast<int64_t>(y);
  const double frac = y - static_cast<double>(q);
  return q + static_cast<int64_t>(frac >= 0.5) - static_cast<int64_t>(frac <= -0.5);
}

class FixedPointCodec {
 public:
  // bits = k in [1, 64]; frac_bits = f in [0, k); max_abs = B finite and > 0;
  // max_summands = N >= 1. kInvalidArgument if out of range or if N * M could
  // reach 2^{k-1} (the sum could wrap).
  static absl::StatusOr<FixedPointCodec> Create(int bits, int frac_bits, double max_abs,
                                                uint64_t max_summands);

  // kInvalidArgument if x is NaN/inf or |x| > max_abs.
  absl::StatusOr<uint64_t> Encode(double x) const;
  // Element-wise; out.size() must equal x.size(). The error names the index.
  absl::Status EncodeVector(std::span<const double> x, std::span<uint64_t> out) const;
  absl::StatusOr<std::vector<uint64_t>> EncodeVector(std::span<const double> x) const;

  // Decodes a value or a sum of at most max_summands encodings (bits above k
  // are ignored). Never fails: every k-bit pattern is a valid sum.
  double DecodeSum(uint64_t v) const;
  // The exact integer behind DecodeSum: signed_k(v).
  int64_t DecodeSumToInteger(uint64_t v) const;
  // out.size() must equal v.size().
  absl::Status DecodeSumVector(std::span<const uint64_t> v, std::span<double> out) const;
  std::vector<double> DecodeSumVector(std::span<const uint64_t> v) const;

  int bits() const { return bits_; }
  int frac_bits() const { return frac_bits_; }
  double max_abs() const { return max_abs_; }
  uint64_t max_summands() const { return max_summands_; }
  // 2^k - 1: reduce mod 2^k with `v & modulus_mask()`.
  uint64_t modulus_mask() const { return mask_; }
  // M = ceil(B * 2^f), the largest magnitude of one encoding.
  uint64_t max_encoded_magnitude() const { return max_magnitude_; }

 private:
  FixedPointCodec(int bits, int frac_bits, double max_abs, uint64_t max_summands,
                  uint64_t max_magnitude);

  int bits_;
  int frac_bits_;
  double max_abs_;
  uint64_t max_summands_;
  uint64_t max_magnitude_;
  uint64_t mask_;
};

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_FIXED_POINT_H_
