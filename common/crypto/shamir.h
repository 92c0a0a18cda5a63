// Shamir t-of-n secret sharing of a byte string (e.g. a 32-byte key).
//
// Construction (documented because every party must agree on it):
//   * field GF(2^127 - 1) (gf127.h);
//   * the secret is cut into 15-byte chunks, read little-endian (the last one
//     zero-padded), so every chunk is < 2^120 < p; a 32-byte key is 3 chunks;
//   * each chunk c gets its own random polynomial f_c of degree t-1 with
//     f_c(0) = c and independent uniform coefficients;
//   * party i (0-based) receives x = i + 1 and y = f_c(x) for every chunk,
//     16 bytes little-endian per chunk.
// Any t shares determine every f_c (Lagrange at 0); t-1 shares are consistent
// with every secret, hence reveal nothing about it.
//
// Shares are as sensitive as the secret once t of them are together; the
// caller seals each one to its recipient (aes_gcm.h) before it leaves the
// device.
#ifndef FEDMF_COMMON_CRYPTO_SHAMIR_H_
#define FEDMF_COMMON_CRYPTO_SHAMIR_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"
#include "common/random/csprng.h"

namespace fedmf::crypto {

inline constexpr size_t kShamirChunkBytes = 15;
inline constexpr size_t kShamirElementBytes = 16;
// Bounds on untrusted sizes (a parsed share drives allocation and work).
inline constexpr size_t kShamirMaxSecretBytes = 64 * 1024;
inline constexpr size_t kShamirMaxShares = size_t{1} << 20;
// Serialized share: x (u32 LE) || secret_size (u32 LE) || y.
inline constexpr size_t kShamirShareHeaderBytes = 8;

struct ShamirShare {
  uint32_t x = 0;            // evaluation point = party index + 1; never 0
  uint32_t secret_size = 0;  // length of the shared secret in bytes (public)
  std::vector<uint8_t> y;    // 16 bytes per 15-byte chunk of the secret

  friend bool operator==(const ShamirShare&, const ShamirShare&) = default;
};

// Number of field elements (and 16-byte share words) for a secret of `size`.
constexpr size_t ShamirChunkCount(size_t size) {
  return (size + kShamirChunkBytes - 1) / kShamirChunkBytes;
}

// Splits `secret` (1..64 KiB) into `num_shares` shares, any `threshold` of
// which reconstruct it; 1 <= threshold <= num_shares <= 2^20. Share i has
// x = i + 1. Coefficients come from `rng` (production: OS-seeded).
absl::StatusOr<std::vector<ShamirShare>> ShamirSplit(std::span<const uint8_t> secret,
                                                     size_t threshold, size_t num_shares,
                                                     random::Csprng& rng);

// Recovers the secret from at least `threshold` shares (the first `threshold`
// are used; every share is validated). kInvalidArgument for: threshold 0,
// fewer than `threshold` shares, x = 0, duplicate x, shares of different
// secret sizes, a y of the wrong length, a non-canonical field element.
// kDataLoss when the interpolated chunks cannot be a secret of this size
// (inconsistent or corrupted shares -- detected with high probability, not
// certainty; authenticate shares with AES-GCM to rule corruption out).
absl::StatusOr<SecretBytes> ShamirReconstruct(std::span<const ShamirShare> shares,
                                              size_t threshold);

std::vector<uint8_t> SerializeShamirShare(const ShamirShare& share);
// Validates everything checkable on one share (x != 0, sizes, canonical y).
absl::StatusOr<ShamirShare> ParseShamirShare(std::span<const uint8_t> bytes);

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_SHAMIR_H_
