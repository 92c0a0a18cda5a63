// AES-256-GCM authenticated encryption (OpenSSL 3 EVP).
//
// Wire format of a sealed message: nonce (12) || ciphertext || tag (16).
// Secure aggregation (ShareKeys) encrypts each Shamir share to its recipient
// under an HKDF-derived pairwise key, with the (sender, recipient, round)
// identifiers as associated data so the server cannot reroute ciphertexts.
//
// Nonces are 96-bit random: with one key, keep the number of messages far
// below 2^32 (pairwise SecAgg keys seal a handful per round, so this holds).
#ifndef FEDMF_COMMON_CRYPTO_AES_GCM_H_
#define FEDMF_COMMON_CRYPTO_AES_GCM_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"
#include "common/random/csprng.h"

namespace fedmf::crypto {

inline constexpr size_t kAesGcmKeyBytes = 32;
inline constexpr size_t kAesGcmNonceBytes = 12;
inline constexpr size_t kAesGcmTagBytes = 16;
inline constexpr size_t kAesGcmOverheadBytes = kAesGcmNonceBytes + kAesGcmTagBytes;

// Seals with a fresh nonce drawn from `rng` (production: an OS-seeded Csprng).
absl::StatusOr<std::vector<uint8_t>> AesGcmSeal(std::span<const uint8_t> key,
                                                std::span<const uint8_t> plaintext,
                                                std::span<const uint8_t> associated_data,
                                                random::Csprng& rng);

// Same output format with a caller-chosen nonce. Reusing a nonce under one key
// destroys confidentiality and authenticity: only for known-answer tests.
absl::StatusOr<std::vector<uint8_t>> AesGcmSealWithNonce(std::span<const uint8_t> key,
                                                         std::span<const uint8_t> nonce,
                                                         std::span<const uint8_t> plaintext,
                                                         std::span<const uint8_t> associated_data);

// Verifies and decrypts a sealed message. Errors:
//   kInvalidArgument: wrong key size, or `sealed` shorter than nonce + tag;
//   kDataLoss: authentication failed -- the nonce, ciphertext, tag or
//     associated data were modified, or the key is wrong. No plaintext is
//     released (OpenSSL's unauthenticated output is wiped).
absl::StatusOr<SecretBytes> AesGcmOpen(std::span<const uint8_t> key,
                                       std::span<const uint8_t> sealed,
                                       std::span<const uint8_t> associated_data);

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_AES_GCM_H_
