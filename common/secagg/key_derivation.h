// How secure aggregation turns X25519 agreements into keys. Every label binds
// the aggregation id, so keys, seeds and masks of two aggregations never
// coincide even if a device were to reuse a key pair; one agreement never
// keys two primitives (distinct HKDF info labels).
//
//   channel key  (i → j) = HKDF-SHA256(X25519(c_sk_i, c_pk_j), salt = "",
//                    info = "fedmf/secagg/v1/channel" ‖ agg ‖ i ‖ j)      32 bytes
//   mask seed    s_ij    = HKDF-SHA256(X25519(s_sk_i, s_pk_j), salt = "",
//                    info = "fedmf/secagg/v1/mask" ‖ agg ‖ min(i,j) ‖ max(i,j))
//   b commitment         = HKDF-SHA256(b_i, salt = "",
//                    info = "fedmf/secagg/v1/commit-b" ‖ agg ‖ i)
//   AES-GCM AAD of a share bundle = "fedmf/secagg/v1/shares" ‖ agg ‖ i ‖ j
// (integers as 8-byte little-endian). The channel key is directional and the
// AAD names sender and recipient, so the server can neither reroute a
// ciphertext to another device nor reflect it back to its sender.
// The commitment is HMAC-SHA256 under a public key of a 256-bit uniformly
// random b_i: hiding, and binding as SHA-256 is collision resistant.
//
// In a session (session.h), the channel keys and a pairwise mask KEY come from
// the setup aggregation's agreements (labels above, agg = the setup's id) and
// live for the whole session; each aggregation r then derives, with
// HKDF-Expand only (RFC 5869 2.3: both keys are already uniform 32-byte keys)
//   round mask seed m_ij^r = HKDF-Expand(mask key_ij,
//                    info = "fedmf/secagg/v1/round-mask" ‖ r ‖ min(i,j) ‖ max(i,j))
//   recovery pad   P_ij^r  = HKDF-Expand(e_i^r, "fedmf/secagg/v1/recovery-pad" ‖ r ‖ i ‖ j)
//   e commitment           = HKDF-Expand(e_i^r, "fedmf/secagg/v1/commit-e" ‖ r ‖ i)
// where e_i^r is device i's fresh 32-byte recovery key of aggregation r.
#ifndef FEDMF_COMMON_SECAGG_KEY_DERIVATION_H_
#define FEDMF_COMMON_SECAGG_KEY_DERIVATION_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/x25519.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg {

inline constexpr size_t kSecretBytes = 32;  // b_i, s_sk_i, every derived key
inline constexpr size_t kCommitmentBytes = 32;

// Both directions of the channel between `self` and `peer` from ONE
// agreement (X25519 dominates a device's cost, so it is done once per peer).
struct ChannelKeys {
  crypto::SecretBytes send;     // self → peer
  crypto::SecretBytes receive;  // peer → self
};
absl::StatusOr<ChannelKeys> DeriveChannelKeys(const crypto::X25519PrivateKey& c_sk,
                                              const crypto::X25519PublicKey& peer_c_pk,
                                              uint64_t aggregation_id, DeviceId self,
                                              DeviceId peer);

// Symmetric in (a, b): both ends, and the server holding s_sk of either end,
// derive the same seed.
absl::StatusOr<crypto::SecretBytes> DeriveMaskSeed(const crypto::X25519PrivateKey& s_sk,
                                                   const crypto::X25519PublicKey& peer_s_pk,
                                                   uint64_t aggregation_id, DeviceId a, DeviceId b);

absl::StatusOr<std::vector<uint8_t>> CommitSelfMaskSeed(std::span<const uint8_t> b,
                                                        uint64_t aggregation_id, DeviceId owner);

// Session rounds (session.h).
absl::StatusOr<crypto::SecretBytes> DeriveRoundMaskSeed(std::span<const uint8_t> mask_key,
                                                        uint64_t aggregation_id, DeviceId a,
                                                        DeviceId b);
absl::StatusOr<crypto::SecretBytes> DeriveRecoveryPad(std::span<const uint8_t> e,
                                                      uint64_t aggregation_id, DeviceId owner,
                                                      DeviceId peer);
absl::StatusOr<std::vector<uint8_t>> CommitRecoveryKey(std::span<const uint8_t> e,
                                                       uint64_t aggregation_id, DeviceId owner);
// pad ⊕ key, both kSecretBytes long: how a round mask seed is hidden under a
// recovery pad (device) and recovered from it (server).
crypto::SecretBytes XorSecret(std::span<const uint8_t> a, std::span<const uint8_t> b);

std::vector<uint8_t> ShareBundleAad(uint64_t aggregation_id, DeviceId sender, DeviceId recipient);

// Whether an X25519 public key is one of the points of small order (on the
// curve or its twist), for which every agreement yields all-zero. The
// complete list of u-coordinates, as in libsodium and RFC 7748 §6.1: 0, 1,
// p-1, the two points of order 8, and the non-canonical p and p+1; bit 255 is
// ignored, as X25519 ignores it. The server rejects such keys up front
// instead of letting them abort honest neighbours later — and a table lookup
// costs nothing, where a probe agreement costs a scalar multiplication.
bool IsLowOrderX25519Key(const crypto::X25519PublicKey& key);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_KEY_DERIVATION_H_
