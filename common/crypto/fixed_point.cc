#include "common/crypto/fixed_point.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::crypto {
namespace {

absl::Status CheckSameSize(size_t a, size_t b) {
  if (a != b) return absl::InvalidArgumentError(absl::StrCat("size mismatch: ", a, " vs ", b));
  return absl::OkStatus();
}

}  // namespace

FixedPointCodec::FixedPointCodec(int bits, int frac_bits, double max_abs, uint64_t max_summands,
                                 uint64_t max_magnitude)
    : bits_(bits),
      frac_bits_(frac_bits),
      max_abs_(max_abs),
      max_summands_(max_summands),
      max_magnitude_(max_magnitude),
      mask_(LowBitsMask(bits)) {}

absl::StatusOr<FixedPointCodec> FixedPointCodec::Create(int bits, int frac_bits, double max_abs,
                                                        uint64_t max_summands) {
  RETURN_IF_ERROR(CheckModulusBits(bits));
  if (frac_bits < 0 || frac_bits >= bits) {
    return absl::InvalidArgumentError(
        absl::StrCat("frac_bits must be in [0, bits), got ", frac_bits, " with bits=", bits));
  }
  if (!std::isfinite(max_abs) || !(max_abs > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_abs must be finite and > 0, got ", max_abs));
  }
  if (max_summands < 1) return absl::InvalidArgumentError("max_summands must be >= 1");
  // B * 2^f is exact in double (scaling by a power of two); test it against
  // 2^63 before converting, so the integer arithmetic below cannot overflow.
  const double scaled = std::ceil(std::ldexp(max_abs, frac_bits));
  if (!(scaled < 0x1.0p63)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_abs * 2^frac_bits = ", scaled, " does not fit in ", bits, " bits"));
  }
  const uint64_t m = static_cast<uint64_t>(scaled);
  const unsigned __int128 worst = static_cast<unsigned __int128>(m) * max_summands;
  const unsigned __int128 limit = static_cast<unsigned __int128>(1) << (bits - 1);
  if (worst >= limit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fixed point could wrap: max_summands * ceil(max_abs * 2^frac_bits) = ", max_summands,
        " * ", m, " must be < 2^(bits-1) = 2^", bits - 1,
        "; use more bits, fewer frac_bits, a smaller bound or fewer summands"));
  }
  return FixedPointCodec(bits, frac_bits, max_abs, max_summands, m);
}

absl::StatusOr<uint64_t> FixedPointCodec::Encode(double x) const {
  if (!std::isfinite(x)) return absl::InvalidArgumentError("fixed point: non-finite input");
  if (std::fabs(x) > max_abs_) {
    return absl::InvalidArgumentError(
        absl::StrCat("fixed point: |", x, "| exceeds the bound ", max_abs_));
  }
  // |x * 2^f| <= B * 2^f < 2^63, so the rounding cannot overflow.
  const int64_t q = RoundHalfAwayFromZero(std::ldexp(x, frac_bits_));
  return static_cast<uint64_t>(q) & mask_;  // two's complement mod 2^k
}

absl::Status FixedPointCodec::EncodeVector(std::span<const double> x,
                                           std::span<uint64_t> out) const {
  RETURN_IF_ERROR(CheckSameSize(x.size(), out.size()));
  // Encode's arithmetic inline (a device encodes ~34k values per round;
  // x * 2^f is exactly ldexp(x, f)), with the bound checked for the whole
  // vector at once instead of a branch per value. Only a refused vector is
  // searched for its first bad element (out of bounds or NaN), whose error
  // comes from Encode; `out` is then unspecified.
  const double scale = std::ldexp(1.0, frac_bits_);
  bool in_bounds = true;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool ok = std::fabs(x[i]) <= max_abs_;  // false for NaN
    in_bounds &= ok;
    // A refused value is not encoded; 0 in its place keeps the conversion
    // defined (|x * 2^f| < 2^63 holds only inside the bound).
    const double y = (ok ? x[i] : 0.0) * scale;
    out[i] = static_cast<uint64_t>(RoundHalfAwayFromZero(y)) & mask_;
  }
  if (in_bounds) return absl::OkStatus();
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(std::fabs(x[i]) <= max_abs_)) {
      const absl::Status refused = Encode(x[i]).status();
      return absl::Status(refused.code(), absl::StrCat("element ", i, ": ", refused.message()));
    }
  }
  return absl::OkStatus();  // not reached: some element was out of bounds
}

absl::StatusOr<std::vector<uint64_t>> FixedPointCodec::EncodeVector(
    std::span<const double> x) const {
  std::vector<uint64_t> out(x.size());
  RETURN_IF_ERROR(EncodeVector(x, out));
  return out;
}

int64_t FixedPointCodec::DecodeSumToInteger(uint64_t v) const {
  // Sign-extend from bit k-1 (arithmetic right shift is defined in C++20).
  const int shift = 64 - bits_;
  return static_cast<int64_t>(v << shift) >> shift;
}

double FixedPointCodec::DecodeSum(uint64_t v) const {
  return std::ldexp(static_cast<double>(DecodeSumToInteger(v)), -frac_bits_);
}

absl::Status FixedPointCodec::DecodeSumVector(std::span<const uint64_t> v,
                                              std::span<double> out) const {
  RETURN_IF_ERROR(CheckSameSize(v.size(), out.size()));
  for (size_t i = 0; i < v.size(); ++i) out[i] = DecodeSum(v[i]);
  return absl::OkStatus();
}

std::vector<double> FixedPointCodec::DecodeSumVector(std::span<const uint64_t> v) const {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = DecodeSum(v[i]);
  return out;
}

}  // namespace fedmf::crypto
