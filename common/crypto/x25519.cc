#include "common/crypto/x25519.h"

#include <sodium.h>

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/internal/sodium_init.h"

namespace fedmf::crypto {

static_assert(crypto_scalarmult_curve25519_BYTES == kX25519KeyBytes);
static_assert(crypto_scalarmult_curve25519_SCALARBYTES == kX25519KeyBytes);

X25519PrivateKey::X25519PrivateKey(SecretBytes scalar, const X25519PublicKey& pub)
    : scalar_(std::move(scalar)), public_key_(pub) {}
X25519PrivateKey::X25519PrivateKey(X25519PrivateKey&&) noexcept = default;
X25519PrivateKey& X25519PrivateKey::operator=(X25519PrivateKey&&) noexcept = default;
X25519PrivateKey::~X25519PrivateKey() = default;

absl::StatusOr<X25519PublicKey> ParseX25519PublicKey(std::span<const uint8_t> bytes) {
  if (bytes.size() != kX25519KeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("X25519 public key must be 32 bytes, got ", bytes.size()));
  }
  X25519PublicKey key;
  std::copy(bytes.begin(), bytes.end(), key.begin());
  return key;
}

absl::StatusOr<X25519PrivateKey> X25519PrivateKey::Generate(random::Csprng& rng) {
  SecretBytes scalar(kX25519KeyBytes);
  rng.FillBytes(scalar.data(), scalar.size());
  return FromBytes(scalar.span());
}

absl::StatusOr<X25519PrivateKey> X25519PrivateKey::FromBytes(std::span<const uint8_t> scalar) {
  if (scalar.size() != kX25519KeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("X25519 private key must be 32 bytes, got ", scalar.size()));
  }
  RETURN_IF_ERROR(internal::EnsureSodium());
  SecretBytes kept(scalar);
  X25519PublicKey pub;
  // Fails only if the clamped scalar times the base point is the identity,
  // which clamping (a multiple of 8 in [2^254, 2^255)) rules out.
  if (crypto_scalarmult_curve25519_base(pub.data(), kept.data()) != 0) {
    return absl::InternalError("X25519: public key computation failed");
  }
  return X25519PrivateKey(std::move(kept), pub);
}

absl::StatusOr<SecretBytes> X25519PrivateKey::ExportBytes() const { return scalar_; }

absl::StatusOr<SecretBytes> X25519PrivateKey::Agree(const X25519PublicKey& peer) const {
  SecretBytes shared(kX25519KeyBytes);
  // libsodium returns -1 exactly when the result is all-zero, i.e. the peer
  // sent a point of small order (RFC 7748 §6.1); it ignores the u-coordinate's
  // top bit, as RFC 7748 §5 requires.
  if (crypto_scalarmult_curve25519(shared.data(), scalar_.data(), peer.data()) != 0 ||
      sodium_is_zero(shared.data(), shared.size()) == 1) {
    return absl::InvalidArgumentError(
        "X25519: agreement produced the all-zero secret (peer sent a low-order point)");
  }
  return shared;
}

}  // namespace fedmf::crypto
