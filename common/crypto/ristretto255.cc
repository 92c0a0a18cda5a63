#include "common/crypto/ristretto255.h"

#include <sodium.h>

#include <utility>

#include "common/base/status_macros.h"
#include "common/crypto/internal/sodium_init.h"

namespace fedmf::crypto {

static_assert(crypto_core_ristretto255_BYTES == kRistrettoPointBytes);
static_assert(crypto_core_ristretto255_SCALARBYTES == kRistrettoScalarBytes);
static_assert(crypto_core_ristretto255_HASHBYTES == crypto_hash_sha512_BYTES);

absl::StatusOr<RistrettoPoint> HashToRistretto(std::string_view domain, std::string_view id) {
  RETURN_IF_ERROR(internal::EnsureSodium());
  // Length-prefixing the domain keeps (domain, id) pairs injective.
  uint8_t length[8];
  uint64_t n = domain.size();
  for (uint8_t& b : length) {
    b = static_cast<uint8_t>(n & 0xff);
    n >>= 8;
  }
  crypto_hash_sha512_state state;
  crypto_hash_sha512_init(&state);
  crypto_hash_sha512_update(&state, length, sizeof(length));
  crypto_hash_sha512_update(&state, reinterpret_cast<const uint8_t*>(domain.data()), domain.size());
  crypto_hash_sha512_update(&state, reinterpret_cast<const uint8_t*>(id.data()), id.size());
  uint8_t digest[crypto_hash_sha512_BYTES];
  crypto_hash_sha512_final(&state, digest);
  RistrettoPoint point;
  if (crypto_core_ristretto255_from_hash(point.data(), digest) != 0) {
    return absl::InternalError("ristretto255: hash-to-group failed");
  }
  return point;
}

absl::Status CheckRistrettoPoint(const RistrettoPoint& point) {
  RETURN_IF_ERROR(internal::EnsureSodium());
  static const RistrettoPoint kIdentity{};
  if (crypto_core_ristretto255_is_valid_point(point.data()) != 1) {
    return absl::InvalidArgumentError("not a canonical ristretto255 element");
  }
  if (sodium_memcmp(point.data(), kIdentity.data(), point.size()) == 0) {
    return absl::InvalidArgumentError("the ristretto255 identity element");
  }
  return absl::OkStatus();
}

absl::StatusOr<RistrettoScalar> RistrettoScalar::Random(random::Csprng& rng) {
  RETURN_IF_ERROR(internal::EnsureSodium());
  SecretBytes wide(crypto_core_ristretto255_NONREDUCEDSCALARBYTES);
  SecretBytes reduced(kRistrettoScalarBytes);
  for (int attempt = 0; attempt < 8; ++attempt) {
    rng.FillBytes(wide.data(), wide.size());
    crypto_core_ristretto255_scalar_reduce(reduced.data(), wide.data());
    if (!sodium_is_zero(reduced.data(), reduced.size())) return RistrettoScalar(std::move(reduced));
  }
  // Probability 2^-2000 with a working generator.
  return absl::InternalError("ristretto255: the random generator returned zero scalars");
}

absl::StatusOr<RistrettoScalar> RistrettoScalar::Inverse() const {
  SecretBytes out(kRistrettoScalarBytes);
  if (crypto_core_ristretto255_scalar_invert(out.data(), bytes_.data()) != 0) {
    return absl::InvalidArgumentError("ristretto255: the zero scalar has no inverse");
  }
  return RistrettoScalar(std::move(out));
}

RistrettoScalar RistrettoScalar::Times(const RistrettoScalar& other) const {
  SecretBytes out(kRistrettoScalarBytes);
  crypto_core_ristretto255_scalar_mul(out.data(), bytes_.data(), other.bytes_.data());
  return RistrettoScalar(std::move(out));
}

absl::StatusOr<RistrettoPoint> RistrettoScalar::Multiply(const RistrettoPoint& point) const {
  RETURN_IF_ERROR(CheckRistrettoPoint(point));
  RistrettoPoint out;
  // Fails for an invalid encoding or an identity result, both excluded above
  // for a non-zero scalar; kept as a check, not an assumption.
  if (crypto_scalarmult_ristretto255(out.data(), bytes_.data(), point.data()) != 0) {
    return absl::InvalidArgumentError("ristretto255: scalar multiplication gave the identity");
  }
  return out;
}

}  // namespace fedmf::crypto
