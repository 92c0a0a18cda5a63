// HKDF-SHA256 (RFC 5869) on OpenSSL's SHA-256 (SHA-NI where the CPU has it).
//
// Secure aggregation derives every symmetric key from an X25519 output with
// this: the AES-GCM channel key and the pairwise PRG seed s_ij come from
// different `info` labels, so one agreement never keys two primitives.
#ifndef FEDMF_COMMON_CRYPTO_HKDF_H_
#define FEDMF_COMMON_CRYPTO_HKDF_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"

namespace fedmf::crypto {

inline constexpr size_t kSha256Bytes = 32;
// RFC 5869 §2.3: L <= 255 * HashLen.
inline constexpr size_t kHkdfSha256MaxOutput = 255 * kSha256Bytes;

// Extract-then-expand. An empty salt means HashLen zero bytes (RFC 5869 §2.2);
// `ikm` must be non-empty; 1 <= length <= 8160.
absl::StatusOr<SecretBytes> HkdfSha256(std::span<const uint8_t> ikm, std::span<const uint8_t> salt,
                                       std::span<const uint8_t> info, size_t length);

// The two halves, for callers that derive many keys from one PRK.
// Extract: PRK = HMAC-SHA256(salt, ikm), 32 bytes.
absl::StatusOr<SecretBytes> HkdfSha256Extract(std::span<const uint8_t> salt,
                                              std::span<const uint8_t> ikm);
// Expand: `prk` must be at least 32 bytes (RFC 5869 §2.3).
absl::StatusOr<SecretBytes> HkdfSha256Expand(std::span<const uint8_t> prk,
                                             std::span<const uint8_t> info, size_t length);

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_HKDF_H_
