// X25519 Diffie-Hellman (RFC 7748) on libsodium's crypto_scalarmult (no
// per-agreement allocation: 30 us against 39 us for OpenSSL's EVP_PKEY derive
// with its per-call contexts on this machine, docs/benchmarks.md).
//
// Secure aggregation uses two key pairs per device: one whose agreement
// yields the pairwise-mask seed s_ij, one for the AES-GCM channel keys. The
// mask private key must be Shamir-shared (so the server can recover the masks
// of dropped devices), which is why it can be exported and re-imported as
// 32 raw bytes. The raw agreement output is NOT uniformly random: always pass
// it through HKDF (hkdf.h) before using it as a key or PRG seed.
#ifndef FEDMF_COMMON_CRYPTO_X25519_H_
#define FEDMF_COMMON_CRYPTO_X25519_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"
#include "common/random/csprng.h"

namespace fedmf::crypto {

inline constexpr size_t kX25519KeyBytes = 32;
using X25519PublicKey = std::array<uint8_t, kX25519KeyBytes>;

// Parses a 32-byte wire public key. Any 32 bytes are a syntactically valid
// u-coordinate (RFC 7748 §5 ignores the top bit); low-order points are caught
// at agreement time, where the all-zero output reveals them.
absl::StatusOr<X25519PublicKey> ParseX25519PublicKey(std::span<const uint8_t> bytes);

class X25519PrivateKey {
 public:
  // 32 bytes from `rng`. Tests pass a seeded stream; production must pass an
  // OS-seeded one (Csprng::FromOsEntropy()).
  static absl::StatusOr<X25519PrivateKey> Generate(random::Csprng& rng);
  // The raw 32-byte scalar, as RFC 7748 defines it (clamping happens inside
  // the scalar multiplication, so any 32 bytes are accepted).
  static absl::StatusOr<X25519PrivateKey> FromBytes(std::span<const uint8_t> scalar);

  X25519PrivateKey(X25519PrivateKey&&) noexcept;
  X25519PrivateKey& operator=(X25519PrivateKey&&) noexcept;
  ~X25519PrivateKey();  // SecretBytes wipes the scalar.

  const X25519PublicKey& public_key() const { return public_key_; }

  // The scalar exactly as imported/generated (for Shamir sharing).
  absl::StatusOr<SecretBytes> ExportBytes() const;

  // X25519(our scalar, peer) as 32 bytes. Fails with kInvalidArgument if the
  // result is all-zero, i.e. the peer sent a low-order point (RFC 7748 §6.1);
  // such a peer is malicious and must not get a "shared" secret it knows.
  absl::StatusOr<SecretBytes> Agree(const X25519PublicKey& peer) const;

 private:
  X25519PrivateKey(SecretBytes scalar, const X25519PublicKey& pub);

  SecretBytes scalar_;  // the raw 32 bytes, unclamped (clamping is in the multiplication)
  X25519PublicKey public_key_{};
};

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_X25519_H_
