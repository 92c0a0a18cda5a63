#include "common/crypto/ed25519.h"

#include <sodium.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/internal/sodium_init.h"

namespace fedmf::crypto {

static_assert(crypto_sign_ed25519_PUBLICKEYBYTES == kEd25519PublicKeyBytes);
static_assert(crypto_sign_ed25519_SEEDBYTES == kEd25519PrivateKeyBytes);
static_assert(crypto_sign_ed25519_BYTES == kEd25519SignatureBytes);

Ed25519PrivateKey::Ed25519PrivateKey(SecretBytes secret_key, const Ed25519PublicKey& pub)
    : secret_key_(std::move(secret_key)), public_key_(pub) {}
Ed25519PrivateKey::Ed25519PrivateKey(Ed25519PrivateKey&&) noexcept = default;
Ed25519PrivateKey& Ed25519PrivateKey::operator=(Ed25519PrivateKey&&) noexcept = default;
Ed25519PrivateKey::~Ed25519PrivateKey() = default;

absl::StatusOr<Ed25519PublicKey> ParseEd25519PublicKey(std::span<const uint8_t> bytes) {
  if (bytes.size() != kEd25519PublicKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ed25519 public key must be 32 bytes, got ", bytes.size()));
  }
  Ed25519PublicKey key;
  std::copy(bytes.begin(), bytes.end(), key.begin());
  return key;
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::Generate(random::Csprng& rng) {
  SecretBytes seed(kEd25519PrivateKeyBytes);
  rng.FillBytes(seed.data(), seed.size());
  return FromSeed(seed.span());
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::FromSeed(std::span<const uint8_t> seed) {
  if (seed.size() != kEd25519PrivateKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ed25519 private key seed must be 32 bytes, got ", seed.size()));
  }
  RETURN_IF_ERROR(internal::EnsureSodium());
  SecretBytes secret_key(crypto_sign_ed25519_SECRETKEYBYTES);
  Ed25519PublicKey pub;
  if (crypto_sign_ed25519_seed_keypair(pub.data(), secret_key.data(), seed.data()) != 0) {
    return absl::InternalError("Ed25519: key derivation from the seed failed");
  }
  return Ed25519PrivateKey(std::move(secret_key), pub);
}

absl::StatusOr<std::vector<uint8_t>> Ed25519PrivateKey::Sign(
    std::span<const uint8_t> message) const {
  std::vector<uint8_t> sig(kEd25519SignatureBytes);
  unsigned long long len = 0;  // NOLINT(runtime/int): libsodium's type
  if (crypto_sign_ed25519_detached(sig.data(), &len, message.data(), message.size(),
                                   secret_key_.data()) != 0 ||
      len != sig.size()) {
    return absl::InternalError("Ed25519: signing failed");
  }
  return sig;
}

absl::Status Ed25519Verify(const Ed25519PublicKey& key, std::span<const uint8_t> message,
                           std::span<const uint8_t> signature) {
  if (signature.size() != kEd25519SignatureBytes) {
    return absl::UnauthenticatedError(
        absl::StrCat("Ed25519 signature must be 64 bytes, got ", signature.size()));
  }
  RETURN_IF_ERROR(internal::EnsureSodium());
  if (crypto_sign_ed25519_verify_detached(signature.data(), message.data(), message.size(),
                                          key.data()) != 0) {
    return absl::UnauthenticatedError("Ed25519 signature does not verify");
  }
  return absl::OkStatus();
}

}  // namespace fedmf::crypto
