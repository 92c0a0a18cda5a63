// Sessions: one key setup for many aggregations (issue #18; the idea of
// Flamingo, Ma et al., IEEE S&P 2023, on top of SecAgg+).
//
// A per-aggregation run (Create) pays 2k X25519 agreements per device every
// time. In a session, the FIRST aggregation (the setup) runs the usual
// AdvertiseKeys/KeysBroadcast exchange and every device keeps, per neighbour
// j, two long-lived secrets: the channel keys (from c_sk) and a pairwise mask
// KEY (from s_sk). Every aggregation r of the session, the setup's included:
//   * masks with round seeds m_ij^r = PRF(mask key_ij, r) (key_derivation.h);
//   * draws a fresh self-mask seed b_i^r and a fresh recovery key e_i^r,
//     Shamir-shares both among its live neighbours (sealed under the
//     long-lived channel keys, AAD binding r), commits to both, and sends
//     P_ij^r ⊕ m_ij^r for every live neighbour j (messages.h, ShareKeys);
//   * unmasks as SecAgg+ does, with e_j^r in the place of s_sk_j: for a
//     dropped j the server recovers e_j^r from t shares and so m_ij^r for
//     each survivor i — the round's seeds only. No long-lived secret is ever
//     revealed, so a device that dropped in round r takes part in round r+1
//     with full protection. docs/security.md ("Sessions") has the argument.
// After the setup, a round's AdvertiseKeys carries no keys (a check-in) and
// its KeysBroadcast names the live neighbours without keys.
//
// Rules the device enforces, whatever the server sends:
//   * every aggregation id of a session is strictly larger than the last one
//     this device took part in (a repeated r would repeat the pairwise masks
//     m_ij^r over a different input, and the difference of two masked inputs
//     would leak the difference of the inputs);
//   * the graph, threshold t, roster and signing mode are the setup's (the
//     abort rule min_survivors, the vector length and the modulus may vary);
//   * a neighbour that did not complete the setup with this device never
//     becomes live in a later round.
#ifndef FEDMF_COMMON_SECAGG_SESSION_H_
#define FEDMF_COMMON_SECAGG_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/secret_bytes.h"
#include "common/secagg/config.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg {

// A device's long-lived session state. Created empty by the caller; the
// setup aggregation's client state machine fills it, later ones read it and
// advance last_aggregation_id(). Shared (std::shared_ptr) between the caller,
// who keeps it for the whole session, and the client state machine of the
// aggregation in progress. One aggregation at a time; not thread-safe.
class ClientSession {
 public:
  struct Peer {
    DeviceId id = 0;
    crypto::SecretBytes send_key;     // seals our share bundles to the peer
    crypto::SecretBytes receive_key;  // opens the peer's bundles to us
    crypto::SecretBytes mask_key;     // PRF key of the round mask seeds m_ij^r
  };

  bool established() const { return config_.has_value(); }
  // The setup's config (with its aggregation id); only if established().
  const SessionConfig& setup_config() const { return *config_; }
  // Largest aggregation id this device has started in the session.
  std::optional<uint64_t> last_aggregation_id() const { return last_aggregation_id_; }
  // Sorted by id: the neighbours that completed the setup with this device.
  const std::vector<Peer>& peers() const { return peers_; }
  // The device this session belongs to, and its neighbourhood N(self) in
  // the setup's graph, which every round keeps (CheckRound): later rounds
  // read it instead of recomputing the graph (O(n) per device and round).
  DeviceId self() const { return self_; }
  const std::vector<DeviceId>& neighbours() const { return neighbours_; }
  const Peer* FindPeer(DeviceId id) const;
  // Signing sessions: the neighbours' certified signing keys, sorted.
  const std::vector<std::pair<DeviceId, crypto::Ed25519PublicKey>>& peer_signing_keys() const {
    return peer_signing_keys_;
  }
  bool signing() const { return signing_; }

  // kInvalidArgument (naming the field) unless `config` may run in this
  // session: same roster, graph, threshold and consistency check as the
  // setup, and an aggregation id above every one used so far. Nothing changes.
  absl::Status CheckRound(const SessionConfig& config, bool signing) const;

  // Called by the state machine only.
  void Establish(SessionConfig config, DeviceId self, std::vector<DeviceId> neighbours,
                 bool signing, std::vector<Peer> peers,
                 std::vector<std::pair<DeviceId, crypto::Ed25519PublicKey>> signing_keys);
  void MarkStarted(uint64_t aggregation_id) { last_aggregation_id_ = aggregation_id; }

 private:
  std::optional<SessionConfig> config_;
  DeviceId self_ = 0;
  std::vector<DeviceId> neighbours_;  // sorted
  bool signing_ = false;
  std::vector<Peer> peers_;
  std::vector<std::pair<DeviceId, crypto::Ed25519PublicKey>> peer_signing_keys_;
  std::optional<uint64_t> last_aggregation_id_;
};

// The server's session state: who completed the setup, and what they
// advertised for signing (relayed in consistency checks). Shared like
// ClientSession between the caller and the server state machine of the
// aggregation in progress.
class ServerSession {
 public:
  bool established() const { return config_.has_value(); }
  const SessionConfig& setup_config() const { return *config_; }
  std::optional<uint64_t> last_aggregation_id() const { return last_aggregation_id_; }
  // Indexed by roster position: 1 if the device completed the setup (U1 of
  // the setup aggregation).
  const std::vector<char>& members() const { return members_; }
  const std::vector<std::vector<uint8_t>>& signing_keys() const { return signing_keys_; }

  // As ClientSession::CheckRound (the server's own hygiene; devices check too).
  absl::Status CheckRound(const SessionConfig& config) const;
  // Whether `device` completed the setup (false before it).
  bool IsMember(DeviceId device) const;

  // Called by the state machine only.
  void Establish(SessionConfig config, std::vector<char> members,
                 std::vector<std::vector<uint8_t>> signing_keys);
  void MarkStarted(uint64_t aggregation_id) { last_aggregation_id_ = aggregation_id; }

 private:
  std::optional<SessionConfig> config_;
  std::vector<char> members_;
  std::vector<std::vector<uint8_t>> signing_keys_;
  std::optional<uint64_t> last_aggregation_id_;
};

// The checks both CheckRound share: `config` against the setup's (nullopt:
// not established, so only the setup itself may start, once).
absl::Status CheckSessionRound(const std::optional<SessionConfig>& setup,
                               std::optional<uint64_t> last, const SessionConfig& config);

// The one re-keying rule (fedmf-server's LFL jobs and lfl::SecAggSum): set a
// session up anew before an aggregation of its n devices that tolerates
// n - min_survivors dropouts once more than half of that are `out` of it
// (missed its setup, or lost their keys).
bool SessionShouldBeRenewed(int64_t out, int64_t n, int64_t min_survivors);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_SESSION_H_
