// The ristretto255 prime-order group (RFC 9496) on libsodium: hash-to-group,
// scalars and scalar multiplication, for the ECDH private set intersection
// (common/psi). A prime-order group matters there: with a cofactor, blinded
// elements could be steered into small subgroups and equality of blinded ids
// would leak through the cofactor part; ristretto255 has no such part and
// every valid encoding is canonical, so equal group elements are equal bytes.
#ifndef FEDMF_COMMON_CRYPTO_RISTRETTO255_H_
#define FEDMF_COMMON_CRYPTO_RISTRETTO255_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"
#include "common/random/csprng.h"

namespace fedmf::crypto {

inline constexpr size_t kRistrettoPointBytes = 32;
inline constexpr size_t kRistrettoScalarBytes = 32;
// A canonical encoding of a group element; compared and sorted as bytes.
using RistrettoPoint = std::array<uint8_t, kRistrettoPointBytes>;

// H(domain, id): SHA-512 of (len(domain) as 8 bytes LE || domain || id),
// mapped with the RFC 9496 one-way map (crypto_core_ristretto255_from_hash),
// so nobody knows the discrete log of H(x) and H behaves as a random oracle
// into the group. The domain separates protocols and versions.
absl::StatusOr<RistrettoPoint> HashToRistretto(std::string_view domain, std::string_view id);

// OK iff `bytes` is the canonical encoding of a group element other than the
// identity; kInvalidArgument otherwise. Every element received from a peer or
// the server goes through this before use.
absl::Status CheckRistrettoPoint(const RistrettoPoint& point);

// A secret, uniformly random, non-zero scalar mod the group order.
class RistrettoScalar {
 public:
  // 64 bytes from `rng` reduced mod the order (bias < 2^-250).
  static absl::StatusOr<RistrettoScalar> Random(random::Csprng& rng);

  // The multiplicative inverse mod the group order.
  absl::StatusOr<RistrettoScalar> Inverse() const;
  // this * other mod the group order.
  RistrettoScalar Times(const RistrettoScalar& other) const;

  // scalar * point. The point is checked (CheckRistrettoPoint) and so is the
  // result, which is never the identity for a valid input and a non-zero
  // scalar (the group has prime order).
  absl::StatusOr<RistrettoPoint> Multiply(const RistrettoPoint& point) const;

 private:
  explicit RistrettoScalar(SecretBytes bytes) : bytes_(std::move(bytes)) {}
  SecretBytes bytes_;  // little-endian, reduced
};

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_RISTRETTO255_H_
