// A device's side of secure aggregation: a state machine driven by the
// server's messages, one state object per phase (client_phases.h).
//
//   kR0AdvertiseKeys --Start()--> kR1ShareKeys --KeysBroadcast--> kR2MaskedInput
//   --MaskedInputRequest--> kR3Unmasking --UnmaskingRequest--> kCompleted
// With ClientSigning (signing.h; against an active server):
//   ... --MaskedInputRequest--> kConsistencyCheck --ConsistencyCheckRequest-->
//   kR3Unmasking --UnmaskingRequest (with >= t valid signatures on U3)--> kCompleted
//   any state --AbortNotice or a message it cannot accept--> kAborted
//
// A client trusts nothing it receives: a message of the wrong type or phase,
// for another aggregation or device, naming a non-neighbour, duplicated,
// of the wrong size, undecryptable, or inconsistent with what the client saw
// earlier aborts THIS client (it sends nothing more; the server treats it as
// a dropout). In particular it answers at most one unmasking request and
// never reveals both the b-share and the s_sk-share of one device.
// (A server that tells DIFFERENT holders different stories about one device
// can still collect b-shares from some and s_sk-shares from others; that is
// what the threshold defends against — t > (k + corrupt neighbours)/2 under
// AdversaryModel::kSemiMalicious, see parameters.h.)
// Single-threaded; no I/O; all randomness from the Csprng it is given.
#ifndef FEDMF_COMMON_SECAGG_CLIENT_STATE_MACHINE_H_
#define FEDMF_COMMON_SECAGG_CLIENT_STATE_MACHINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/random/csprng.h"
#include "common/secagg/config.h"
#include "common/secagg/messages.h"
#include "common/secagg/session.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg {

enum class ClientState : uint8_t {
  kR0AdvertiseKeys,
  kR1ShareKeys,
  kR2MaskedInput,
  kR3Unmasking,
  kCompleted,
  kAborted,
  kConsistencyCheck,  // between kR2MaskedInput and kR3Unmasking, signing clients only
};
const char* ClientStateName(ClientState state);

namespace internal {
struct ClientContext;
class ClientPhase;
}  // namespace internal

class ClientStateMachine {
 public:
  // `rng` must be OS-seeded in production (it makes the keys and b_i); a
  // seeded stream makes simulations reproducible.
  // With `signing` the client signs its advertisement, accepts only
  // neighbour keys certified by signing->certifier and signed under the
  // certified key, and runs the consistency check before unmasking.
  static absl::StatusOr<ClientStateMachine> Create(
      SessionConfig config, DeviceId self, random::Csprng rng,
      std::optional<ClientSigning> signing = std::nullopt);

  // One aggregation of a session (session.h): if `session` is not yet
  // established this aggregation is its setup and fills it; otherwise the
  // session's keys are used and Start() sends a key-less check-in.
  // kInvalidArgument if `config` cannot run in the session (ClientSession::
  // CheckRound); on success the session records config.aggregation_id as
  // used, so it can never run again even if this aggregation aborts.
  static absl::StatusOr<ClientStateMachine> CreateInSession(
      SessionConfig config, DeviceId self, random::Csprng rng,
      std::shared_ptr<ClientSession> session, std::optional<ClientSigning> signing = std::nullopt);

  ClientStateMachine(ClientStateMachine&&) noexcept;
  ClientStateMachine& operator=(ClientStateMachine&&) noexcept;
  ~ClientStateMachine();

  ClientState state() const { return state_; }
  DeviceId id() const;
  // N(self) in this aggregation's graph, sorted.
  const std::vector<DeviceId>& neighbours() const;

  // x_i: config.vector_length elements, each < 2^bits. Must be set before the
  // MaskedInputRequest arrives (so a device can compute its input while keys
  // are being exchanged). kInvalidArgument leaves the client unchanged.
  absl::Status SetInput(std::vector<uint64_t> input);

  // kR0AdvertiseKeys → kR1ShareKeys: generates this aggregation's key pairs.
  absl::StatusOr<ClientMessage> Start();

  // One server message → the next state and at most one reply. If the
  // message is rejected the client moves to kAborted and the error is the
  // reason (also kept in abort_reason()). In kCompleted/kAborted every
  // message is refused with kFailedPrecondition and nothing changes.
  absl::StatusOr<std::optional<ClientMessage>> Handle(const ServerMessage& message);

  // OK unless state() == kAborted.
  const absl::Status& abort_reason() const { return abort_reason_; }

 private:
  ClientStateMachine(std::unique_ptr<internal::ClientContext> ctx,
                     std::unique_ptr<internal::ClientPhase> phase);
  // Create once N(self) is known (`neighbours`, sorted).
  static absl::StatusOr<ClientStateMachine> WithNeighbours(SessionConfig config, DeviceId self,
                                                           std::vector<DeviceId> neighbours,
                                                           random::Csprng rng,
                                                           std::optional<ClientSigning> signing);
  absl::Status Abort(absl::Status reason);
  absl::Status CheckHeader(const ServerMessage& message) const;

  std::unique_ptr<internal::ClientContext> ctx_;
  std::unique_ptr<internal::ClientPhase> phase_;  // null once terminal
  ClientState state_ = ClientState::kR0AdvertiseKeys;
  absl::Status abort_reason_;
};

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_CLIENT_STATE_MACHINE_H_
