// Arithmetic in GF(p), p = 2^127 - 1 (a Mersenne prime), on unsigned __int128.
//
// Why this field for Shamir sharing: reduction modulo a Mersenne prime is two
// shifts and adds, so sharing 32-byte keys among thousands of parties needs no
// BIGNUM; 127 bits hold a 15-byte chunk of secret with room to spare.
// Elements are canonical: 0 <= e < p. Reduction is branch-free; the exponent
// in Inv (p - 2) is public.
#ifndef FEDMF_COMMON_CRYPTO_GF127_H_
#define FEDMF_COMMON_CRYPTO_GF127_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace fedmf::crypto::gf127 {

using Elem = unsigned __int128;

inline constexpr Elem kP = (Elem{1} << 127) - 1;
inline constexpr size_t kElemBytes = 16;

constexpr bool IsCanonical(Elem a) { return a < kP; }

// x mod p for any x < 2^128.
constexpr Elem Reduce(Elem x) {
  const Elem r = (x & kP) + (x >> 127);  // <= p + 1, since 2^127 == 1 (mod p)
  const Elem t = r - kP;                 // wraps to >= 2^127 iff r < p
  const Elem keep_r = Elem{0} - (t >> 127);
  return (r & keep_r) | (t & ~keep_r);
}

constexpr Elem Add(Elem a, Elem b) { return Reduce(a + b); }
constexpr Elem Sub(Elem a, Elem b) { return Reduce(a + (kP - b)); }
constexpr Elem Neg(Elem a) { return Reduce(kP - a); }

constexpr Elem Mul(Elem a, Elem b) {
  const uint64_t a0 = static_cast<uint64_t>(a), a1 = static_cast<uint64_t>(a >> 64);
  const uint64_t b0 = static_cast<uint64_t>(b), b1 = static_cast<uint64_t>(b >> 64);
  const Elem p00 = Elem{a0} * b0, p01 = Elem{a0} * b1, p10 = Elem{a1} * b0, p11 = Elem{a1} * b1;
  const Elem mid = p01 + p10;  // a1, b1 < 2^63, so no overflow
  const Elem lo = p00 + (mid << 64);
  const Elem carry = lo < p00 ? 1 : 0;
  const Elem hi = p11 + (mid >> 64) + carry;  // product = hi * 2^128 + lo, hi < 2^127
  // 2^128 == 2 (mod p): fold hi in twice and lo's top bit once.
  return Reduce(2 * hi + (lo & kP) + (lo >> 127));
}

constexpr Elem Pow(Elem base, Elem exp) {
  Elem result = 1;
  while (exp != 0) {
    if (exp & 1) result = Mul(result, base);
    base = Mul(base, base);
    exp >>= 1;
  }
  return result;
}

// Multiplicative inverse by Fermat; Inv(0) == 0 (callers exclude 0).
constexpr Elem Inv(Elem a) { return Pow(a, kP - 2); }

// Little-endian 16-byte encoding.
Elem Load(const uint8_t* in);
void Store(Elem a, uint8_t* out);

// lambda_j such that f(x) = sum_j lambda_j * f(xs[j]) for every polynomial f of
// degree < xs.size(). Errors if xs is empty, has duplicates or non-canonical
// values. O(k^2) multiplications plus one inversion.
absl::StatusOr<std::vector<Elem>> LagrangeCoefficients(std::span<const Elem> xs, Elem x);

// The value at x of the unique polynomial of degree < xs.size() through
// (xs[j], ys[j]).
absl::StatusOr<Elem> InterpolateAt(std::span<const Elem> xs, std::span<const Elem> ys, Elem x);

}  // namespace fedmf::crypto::gf127

#endif  // FEDMF_COMMON_CRYPTO_GF127_H_
