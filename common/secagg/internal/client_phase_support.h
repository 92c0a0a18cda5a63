// Internal to common/secagg: what more than one client phase uses — the
// checks on untrusted id lists, what a device keeps about its neighbours
// between phases, and the splitting of its two secrets among its holders.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_PHASE_SUPPORT_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_PHASE_SUPPORT_H_

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/secagg/client_state_machine.h"
#include "common/secagg/internal/client_phases.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg::internal {

// kFailedPrecondition: `message` is not what a phase in `state` expects.
absl::Status Unexpected(const ServerMessage& message, ClientState state);

bool Contains(const std::vector<DeviceId>& sorted, DeviceId id);

// Sorted copy of `ids`; error on duplicates.
absl::StatusOr<std::vector<DeviceId>> SortedUnique(std::vector<DeviceId> ids, const char* what);

// What a device knows about one live neighbour after the key broadcast.
struct Peer {
  DeviceId id = 0;
  crypto::X25519PublicKey s_pk{};   // per-aggregation runs: agreed with s_sk in MaskedInput
  crypto::SecretBytes receive_key;  // opens what the peer sealed to us
  crypto::SecretBytes round_seed;   // session rounds: m_ij^r, already derived
};

// A peer's shares of its own secrets, as received in the MaskedInputRequest.
struct HeldShares {
  DeviceId owner = 0;
  crypto::ShamirShare s_sk_share;
  crypto::ShamirShare b_share;
};

// Shares are as sensitive as secrets once t of them meet; wipe on the way out.
void Wipe(crypto::ShamirShare& s);

// A device's two secrets split among its holders H(i) = {i} ∪ live, sorted;
// the holder at position p gets x = p + 1. Shares are wiped on the way out.
struct HolderShares {
  std::vector<DeviceId> holders;
  size_t self_pos = 0;
  std::vector<crypto::ShamirShare> dropout;  // of s_sk (per aggregation) or e (session)
  std::vector<crypto::ShamirShare> b;
  ~HolderShares() {
    for (crypto::ShamirShare& s : dropout) Wipe(s);
    for (crypto::ShamirShare& s : b) Wipe(s);
  }
  // The live neighbour at holder position p != self_pos, as an index into `live`.
  size_t LiveIndex(size_t p) const { return p < self_pos ? p : p - 1; }
};

// `live`: sorted ids of the live neighbours; both secrets kSecretBytes long.
absl::StatusOr<std::unique_ptr<HolderShares>> SplitAmongHolders(
    ClientContext& ctx, const std::vector<DeviceId>& live, std::span<const uint8_t> dropout_secret,
    std::span<const uint8_t> b);

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_PHASE_SUPPORT_H_
