// The server's side of secure aggregation: one state object per phase
// (server_phases.h), driven by device messages (Receive) and by the end of
// each phase (ClosePhase: every expected message arrived, or the deadline
// passed — the caller decides, since there is no clock here).
//
//   kR0AdvertiseKeys → kR1ShareKeys → kR2MaskedInput → kR3Unmasking → kCompleted
//   (config.consistency_check: kR2MaskedInput → kConsistencyCheck → kR3Unmasking;
//   the server then also requires signed advertisements, signing.h)
//   any phase boundary with fewer than min_survivors devices → kAborted
//
// Untrusted input never aborts the aggregation and never corrupts the sum of
// the others: a message of the wrong phase or type, from an unknown device
// or one no longer in the aggregation, duplicated, of the wrong size, or
// inconsistent is rejected with a reason (rejections()), and its sender is
// dropped from the aggregation. One exception, by necessity: once a device's
// masked input has been accepted it is committed to U3 — its contribution is
// already in the running sum and could only be taken out again by learning
// both of its secrets, which the protocol forbids. Later misbehaviour of a
// committed device (a second masked input, a bad unmasking response) is
// rejected and logged, and only its unmasking response is discarded.
//
// Abort rule (config.h): abort exactly when |U_phase| < min_survivors at a
// phase boundary, or when a secret the sum needs has fewer than `threshold`
// shares among the unmasking responders (possible only in SecAgg+).
#ifndef FEDMF_COMMON_SECAGG_SERVER_STATE_MACHINE_H_
#define FEDMF_COMMON_SECAGG_SERVER_STATE_MACHINE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/random/csprng.h"
#include "common/secagg/config.h"
#include "common/secagg/messages.h"
#include "common/secagg/session.h"

namespace fedmf::secagg {

enum class ServerState : uint8_t {
  kR0AdvertiseKeys,
  kR1ShareKeys,
  kR2MaskedInput,
  kR3Unmasking,
  kCompleted,
  kAborted,
  kConsistencyCheck,  // between kR2MaskedInput and kR3Unmasking, if config.consistency_check
};
const char* ServerStateName(ServerState state);

// One rejected message or excluded device, for logs and metrics.
struct Rejection {
  DeviceId device = 0;                  // the sender as claimed (may be unknown to the roster)
  Phase phase = Phase::kAdvertiseKeys;  // the server's phase at the time
  absl::Status reason;
  // Whether this removed the device from the current phase's survivor set.
  // In Unmasking that means its response is ignored (U4); its input, already
  // committed to U3, stays in the sum.
  bool device_dropped = false;
};

struct AggregationResult {
  std::vector<uint64_t> sum;       // Σ_{i ∈ U3} x_i mod 2^bits
  std::vector<DeviceId> included;  // U3, sorted
};

namespace internal {
struct ServerContext;
class ServerPhase;
}  // namespace internal

class ServerStateMachine {
 public:
  // `rng` seeds nothing secret (it only orders retries over share subsets
  // when a holder lied).
  static absl::StatusOr<ServerStateMachine> Create(SessionConfig config, random::Csprng rng);

  // One aggregation of a session (session.h): if `session` is not yet
  // established this aggregation is its setup (a normal AdvertiseKeys round
  // whose U1 becomes the session's members); otherwise only members may
  // check in, without keys. kInvalidArgument if `config` cannot run in the
  // session; on success its aggregation id counts as used. `absent`: roster
  // devices the caller will not ask (e.g. LFL round 2's non-survivors), so
  // the first phase does not wait for them; at the setup they never become
  // members.
  static absl::StatusOr<ServerStateMachine> CreateInSession(
      SessionConfig config, random::Csprng rng, std::shared_ptr<ServerSession> session,
      const std::vector<DeviceId>& absent = {});

  ServerStateMachine(ServerStateMachine&&) noexcept;
  ServerStateMachine& operator=(ServerStateMachine&&) noexcept;
  ~ServerStateMachine();

  // Lets the unmasking (its seed recovery and mask stripping, the server's
  // one long serial step) run on up to `threads` threads. Default 1; the
  // result and everything sent are the same with any value.
  void set_threads(int threads);

  ServerState state() const { return state_; }
  const SessionConfig& config() const;

  // Accepts one device message (OK) or rejects it (the reason, also appended
  // to rejections()). Never changes state().
  absl::Status Receive(const ClientMessage& message);

  // Whether every device still in the aggregation has answered this phase
  // (a caller may close early then).
  bool AllExpectedReceived() const;

  // Ends the current phase. Returns the messages opening the next phase, or
  // AbortNotices for the remaining devices if the server aborts (state()
  // tells which). kFailedPrecondition in kCompleted/kAborted.
  absl::StatusOr<std::vector<ServerMessage>> ClosePhase();

  const std::vector<Rejection>& rejections() const;
  // OK unless state() == kAborted.
  const absl::Status& abort_reason() const;
  // The devices still in after `phase` closed: U1 (kAdvertiseKeys), U2, U3,
  // U4 (kUnmasking); empty before that phase closed.
  std::vector<DeviceId> Survivors(Phase phase) const;
  // kFailedPrecondition unless kCompleted.
  absl::StatusOr<AggregationResult> Result() const;

 private:
  ServerStateMachine(std::unique_ptr<internal::ServerContext> ctx,
                     std::unique_ptr<internal::ServerPhase> phase);
  absl::Status Reject(DeviceId device, absl::Status reason, bool drop);

  std::unique_ptr<internal::ServerContext> ctx_;
  std::unique_ptr<internal::ServerPhase> phase_;  // null once terminal
  ServerState state_ = ServerState::kR0AdvertiseKeys;
};

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_SERVER_STATE_MACHINE_H_
