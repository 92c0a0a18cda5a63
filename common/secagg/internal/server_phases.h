// Internal to common/secagg: the server's shared context and per-phase state
// objects. A phase object knows which devices may speak in it, who has, and
// who was excluded; it validates and stores their messages and, on Close,
// computes the next survivor set and the messages that open the next phase.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_SERVER_PHASES_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_SERVER_PHASES_H_

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/x25519.h"
#include "common/random/csprng.h"
#include "common/secagg/config.h"
#include "common/secagg/graph.h"
#include "common/secagg/messages.h"
#include "common/secagg/server_state_machine.h"
#include "common/secagg/session.h"

namespace fedmf::secagg::internal {

// Membership flags indexed by roster position (char, not vector<bool>, so
// that the hot loops stay simple).
using DeviceSet = std::vector<char>;

struct ServerContext {
  SessionConfig config;
  NeighbourhoodGraph graph;
  random::Csprng rng;
  std::vector<Rejection> rejections;
  absl::Status abort_reason;
  // survivors[p] = U_{p+1} once phase p has closed.
  std::array<std::optional<DeviceSet>, 4> survivors;
  std::vector<crypto::X25519PublicKey> c_pk;
  std::vector<crypto::X25519PublicKey> s_pk;
  std::vector<std::vector<uint8_t>> b_commitment;
  // Consistency-check sessions only: what each device advertised for signing.
  std::vector<std::vector<uint8_t>> signing_key;
  std::vector<std::vector<uint8_t>> credential;
  std::vector<std::vector<uint8_t>> advert_signature;
  // Complete graph: H(i) = U1 for every i, so a holder's x is its rank in U1.
  std::vector<uint32_t> u1_rank;
  std::vector<uint64_t> sum;  // running Σ y_i over accepted masked inputs
  std::optional<AggregationResult> result;
  // Present iff this aggregation belongs to a session (session.h).
  std::shared_ptr<ServerSession> session;
  // Session rounds only, by roster index: the commitment to e_i and the
  // hidden round seeds m_ij ⊕ pad, sorted by peer (messages.h, ShareKeys).
  std::vector<std::vector<uint8_t>> recovery_commitment;
  std::vector<std::vector<MaskPad>> mask_pads;
  // Threads the unmasking may use to recover seeds and strip masks; the
  // result does not depend on it.
  int threads = 1;

  MessageHeader HeaderTo(size_t index, Phase phase) const {
    return MessageHeader{config.aggregation_id, kServerId, config.roster[index], phase};
  }
  // N(index) ∩ set, as sorted roster indices.
  std::vector<size_t> NeighboursIn(size_t index, const DeviceSet& set) const;
  // The x-coordinate of `holder`'s share of `owner`'s secrets: 1 + the rank
  // of holder in H(owner) = {owner} ∪ (N(owner) ∩ U1), as the owner computed.
  uint32_t HolderX(size_t owner, size_t holder) const;
};

class ServerPhase;

struct ServerTransition {
  std::unique_ptr<ServerPhase> next;  // null: completed, or aborted if ctx.abort_reason is set
  std::vector<ServerMessage> out;
};

// What happened to a message.
struct Verdict {
  absl::Status status;   // OK: accepted
  bool dropped = false;  // the sender was excluded from this phase's survivors
};

class ServerPhase {
 public:
  explicit ServerPhase(DeviceSet eligible);
  virtual ~ServerPhase() = default;

  virtual ServerState state() const = 0;
  virtual Phase phase() const = 0;

  // A message of this phase's type from roster device `index`.
  Verdict Receive(ServerContext& ctx, size_t index, const ClientMessage& message);
  // A message from `index` that is wrong before its contents are looked at
  // (wrong aggregation, addressing, phase tag or type).
  Verdict Penalize(ServerContext& ctx, size_t index, absl::Status reason);
  bool AllExpectedReceived() const;
  virtual absl::StatusOr<ServerTransition> Close(ServerContext& ctx) = 0;

 protected:
  // Validates and stores; on error stores nothing.
  virtual absl::Status Accept(ServerContext& ctx, size_t index, const ClientMessage& message) = 0;
  // Whether an accepted message can no longer be taken back (masked inputs).
  virtual bool Committed(size_t) const { return false; }
  // Forgets what `index` stored in this phase.
  virtual void Discard(ServerContext&, size_t) {}

  // Eligible, answered, and not excluded: this phase's survivors.
  DeviceSet Survivors() const;
  // Abort: notices to every device that could still be listening.
  ServerTransition AbortWith(ServerContext& ctx, absl::Status reason) const;

  DeviceSet eligible_;
  DeviceSet received_;
  DeviceSet excluded_;
};

std::unique_ptr<ServerPhase> MakeServerInitialPhase(const SessionConfig& config);
// The first phase over `eligible`: advertisements, or (`check_in`: a
// session round after the setup, session.h) key-less check-ins.
std::unique_ptr<ServerPhase> MakeAdvertisePhase(DeviceSet eligible, bool check_in);

// server_unmasking.cc: the last phase.
// `not_asked`: members of U3 that are not sent an unmasking request (they did
// not sign the survivor set); their inputs stay in the sum.
std::unique_ptr<ServerPhase> MakeUnmaskingPhase(DeviceSet u3, DeviceSet dropped,
                                                DeviceSet not_asked = {});

size_t Count(const DeviceSet& set);

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_SERVER_PHASES_H_
