// The plaintext a device seals to each neighbour in ShareKeys: who it is
// from and for, and that neighbour's Shamir shares of the sender's two
// secrets (s_sk_i and b_i, 32 bytes each).
//
// Layout (fixed size, so a ciphertext of any other length is rejected before
// decryption):  owner u64 LE ‖ holder u64 LE ‖ share(s_sk) ‖ share(b),
// each share serialized as in common/crypto/shamir.h (8 + 48 bytes).
// The ids inside are checked against the AES-GCM AAD's ids by the recipient,
// which is redundant with the AAD but keeps the plaintext self-describing
// (Bonawitz et al.'s "u ‖ v ‖ shares").
#ifndef FEDMF_COMMON_SECAGG_SHARE_BUNDLE_H_
#define FEDMF_COMMON_SECAGG_SHARE_BUNDLE_H_

#include <cstddef>
#include <span>

#include "absl/status/statusor.h"
#include "common/crypto/aes_gcm.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg {

inline constexpr size_t kSerializedShareBytes =
    crypto::kShamirShareHeaderBytes +
    crypto::ShamirChunkCount(kSecretBytes) * crypto::kShamirElementBytes;
inline constexpr size_t kShareBundleBytes = 16 + 2 * kSerializedShareBytes;
inline constexpr size_t kSealedShareBundleBytes = kShareBundleBytes + crypto::kAesGcmOverheadBytes;

struct ShareBundle {
  DeviceId owner = 0;   // whose secrets these are shares of (the sender)
  DeviceId holder = 0;  // who holds them (the recipient)
  crypto::ShamirShare s_sk_share;
  crypto::ShamirShare b_share;
};

crypto::SecretBytes EncodeShareBundle(const ShareBundle& bundle);
// Validates sizes and both shares (each must be of a 32-byte secret).
absl::StatusOr<ShareBundle> DecodeShareBundle(std::span<const uint8_t> bytes);
// A serialized share of a 32-byte secret, as revealed in unmasking.
absl::StatusOr<crypto::ShamirShare> ParseSecretShare(std::span<const uint8_t> bytes);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_SHARE_BUNDLE_H_
