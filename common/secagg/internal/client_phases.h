// Internal to common/secagg: the client's per-phase state objects. Each holds
// exactly the secrets its phase still needs and hands the rest to the next
// one, so that e.g. the channel private key is gone once shares are sealed.
// One file per phase, in protocol order: client_r0_advertise_keys,
// client_r1_share_keys (client_r1_session_share_keys in a session round),
// client_r2_masked_input, client_consistency_check (signing clients only),
// client_r3_unmasking; client_phase_support holds what several share.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_PHASES_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_PHASES_H_

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/random/csprng.h"
#include "common/secagg/client_state_machine.h"
#include "common/secagg/config.h"
#include "common/secagg/messages.h"
#include "common/secagg/session.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg::internal {

// What every phase may read: public parameters, identity, randomness, input.
struct ClientContext {
  SessionConfig config;
  DeviceId self = 0;
  std::vector<DeviceId> neighbours;  // N(self), sorted
  random::Csprng rng;
  std::optional<std::vector<uint64_t>> input;
  // Present iff this device defends against an active server (signing.h).
  std::optional<ClientSigning> signing;
  // The certified signing keys of N(self) ∩ U1, sorted by device (signing only).
  std::vector<std::pair<DeviceId, crypto::Ed25519PublicKey>> peer_signing_keys;
  // Present iff this aggregation belongs to a session (session.h); shared
  // with the caller, who keeps it between aggregations.
  std::shared_ptr<ClientSession> session;

  MessageHeader Header(Phase phase) const {
    return MessageHeader{config.aggregation_id, self, kServerId, phase};
  }
};

class ClientPhase;

struct ClientTransition {
  std::unique_ptr<ClientPhase> next;  // null: completed
  std::optional<ClientMessage> out;
};

class ClientPhase {
 public:
  virtual ~ClientPhase() = default;
  virtual ClientState state() const = 0;
  // Only the first phase starts; the others refuse.
  virtual absl::StatusOr<ClientTransition> Start(ClientContext& ctx);
  // The message has passed the header checks (aggregation, addressing and
  // phase tag consistent with its type); the phase checks the rest.
  virtual absl::StatusOr<ClientTransition> Handle(ClientContext& ctx,
                                                  const ServerMessage& message) = 0;
};

std::unique_ptr<ClientPhase> MakeClientInitialPhase();

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_PHASES_H_
