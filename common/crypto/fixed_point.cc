#include "common/crypto/fixed_point.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::crypto {
namespace {

absl::Status CheckSameSize(size_t a, size_t b) {
  if (a != b) return absl::InvalidArgumentError(absl::StrCat("size mismatch: ", a, " vs ", b));
  return absl::OkStatus();
}

#if defined(__x86_64__)
bool CpuHasAvx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}

// EncodeVector's loop four values at a time, for codecs whose encodings stay
// below 2^51 in magnitude (every 32-bit codec): the baseline x86-64 target
// converts double to int64 one value at a time (cvttsd2si), and without
// AVX-512 there is no vector conversion, so the integer is read off the
// mantissa of r + 1.5 * 2^52 instead (exact for |r| < 2^51). Same arithmetic
// as RoundHalfAwayFromZero otherwise: truncate, then step by the fraction.
// Writes out[0, n) for n a multiple of 4; returns whether every |x[i]| <=
// max_abs (refused values are encoded as 0, like the scalar loop).
__attribute__((target("avx2"))) bool EncodeFourAtATime(const double* x, size_t n, double max_abs,
                                                       double scale, uint64_t mask, uint64_t* out) {
  const __m256d abs_bits = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff));
  const __m256d bound = _mm256_set1_pd(max_abs);
  const __m256d factor = _mm256_set1_pd(scale);
  const __m256d half = _mm256_set1_pd(0.5);
  const __m256d minus_half = _mm256_set1_pd(-0.5);
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d magic = _mm256_set1_pd(0x1.8p52);
  const __m256i magic_bits = _mm256_castpd_si256(magic);
  const __m256i low_bits = _mm256_set1_epi64x(static_cast<long long>(mask));
  __m256d all_ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  for (size_t i = 0; i < n; i += 4) {
    const __m256d v = _mm256_loadu_pd(x + i);
    const __m256d ok = _mm256_cmp_pd(_mm256_and_pd(v, abs_bits), bound, _CMP_LE_OQ);  // NaN: no
    all_ok = _mm256_and_pd(all_ok, ok);
    const __m256d y = _mm256_mul_pd(_mm256_and_pd(v, ok), factor);
    const __m256d q = _mm256_round_pd(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d frac = _mm256_sub_pd(y, q);
    const __m256d up = _mm256_and_pd(_mm256_cmp_pd(frac, half, _CMP_GE_OQ), one);
    const __m256d down = _mm256_and_pd(_mm256_cmp_pd(frac, minus_half, _CMP_LE_OQ), one);
    const __m256d r = _mm256_sub_pd(_mm256_add_pd(q, up), down);
    const __m256i q64 = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(r, magic)), magic_bits);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_and_si256(q64, low_bits));
  }
  return _mm256_movemask_pd(all_ok) == 0xf;
}
#else
bool CpuHasAvx2() { return false; }
bool EncodeFourAtATime(const double*, size_t, double, double, uint64_t, uint64_t*) {
  return false;  // never called
}
#endif

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
  size_t i = 0;
  if (max_magnitude_ < (uint64_t{1} << 51) && CpuHasAvx2()) {
    i = x.size() - x.size() % 4;
    in_bounds = EncodeFourAtATime(x.data(), i, max_abs_, scale, mask_, out.data());
  }
  for (; i < x.size(); ++i) {
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
