// The server's side of one LFL-SGDMF job over device hosts (docs/protocols.md §4):
// an explicit state machine, no gRPC, no threads, no clock of its own (the
// caller passes `now`). server/lfl/lfl_coordinator.h wraps it with a lock, the
// long poll and persistence; server/lfl/device_service.h is the gRPC edge.
//
//   kJoining  -- every granted device announced by its host, or the join
//                deadline with >= 2 devices --> kPretrain (V(0) drawn, the job's
//                device set D and n = |D| fixed)
//   kPretrain -- every host of D reported its Stage-1 metrics, or deadline
//                --> kRound(t = 0, round 1)
//   kRound(t, r) -- one secure aggregation per round, its four phases each
//                closed when every device still in answered, every host with
//                such a device submitted (or went silent), or the phase
//                deadline passed:
//       r = 1 over D, abort threshold ceil((1-omega) n) (the skip rule):
//             aborted --> iteration skipped; else g~ decoded, U1 = included
//       r = 2 over U1 still present: aborted --> round-1 noise alone stays
//       --> V(t+1) = clip(V - lr_t/|U1| (g~ + sum xibar)), iteration recorded
//       --> kRound(t+1, 1) | kFinish after T
//   kFinish   -- every host reported its Stage-3 metrics, or deadline --> kFinished
// The arithmetic is that of lfl::SimulateLfl (common/lfl/lfl_simulator.cc),
// with the same codecs (lfl::ChooseLflCodecs) and the same seeded V(0).
//
// Untrusted input: a batch whose header is not the current (job, iteration,
// round, aggregation, phase) is refused as a whole (stale or replayed); inside
// a batch, a message for a device the host is not granted, not in the
// aggregation, of the wrong shape, or rejected by the secagg server state
// machine drops only that device, with its reason logged and kept in the
// status. The secagg server guarantees the others' sum is unaffected.
#ifndef FEDMF_SERVER_LFL_LFL_JOB_H_
#define FEDMF_SERVER_LFL_LFL_JOB_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/lfl/secagg_sum.h"
#include "common/lfl/two_round_dp.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "common/log/log_throttle.h"
#include "common/mf/embeddings.h"
#include "common/mf/sgd.h"
#include "common/random/csprng.h"
#include "common/secagg/server_state_machine.h"
#include "fedmf/v1/device.pb.h"

namespace fedmf::server {

class LflJob {
 public:
  enum class Stage { kJoining, kPretrain, kRound, kFinish, kFinished, kFailed };

  static absl::StatusOr<std::unique_ptr<LflJob>> Create(const v1::JobSpec& spec, absl::Time now,
                                                        absl::Duration liveness);

  // A host announces its devices (every long poll). Refused, naming the
  // device, if one is not granted to `host`.
  absl::Status Hello(const std::string& host, const std::vector<uint64_t>& devices, absl::Time now);
  v1::DeviceTask TaskFor(const std::string& host) const;
  // Any RPC from `host`: it is alive (a host busy computing a phase keeps
  // streaming, so it is not mistaken for a vanished one).
  void Touch(const std::string& host, absl::Time now) { last_seen_[host] = now; }
  // Whether any grant of the job names `host`. A host that has none is
  // outside the job: it is told nothing about it and its messages are not
  // logged.
  bool Grants(const std::string& host) const;
  // Warning lines about dropped devices per minute (the rest counted).
  void set_rejection_log_lines_per_minute(int64_t n) { drop_log_.set_per_minute(n); }
  // Threads for each aggregation's unmasking (ServerStateMachine::set_threads;
  // a fork-join inside ClosePhase, the job itself owns no thread). Default 1.
  void set_unmasking_threads(int threads) { unmasking_threads_ = threads; }
  // V(iteration) while it is the current model (0 in Stage 1, T in Stage 3).
  absl::StatusOr<mf::Matrix> Model(const std::string& host, int32_t iteration);
  absl::StatusOr<std::vector<v1::InboxMessage>> Inbox(const std::string& host,
                                                      const v1::BatchHeader& header);
  // Refuses a stale/replayed or foreign header as a whole.
  absl::Status CheckHeader(const std::string& host, const v1::BatchHeader& header) const;
  // One device's message under `header`. A message for a device that is not
  // `host`'s is dropped (logged and recorded) whatever the header says: that
  // is misbehaviour, and a phase that closed while the host's stream was open
  // must not hide it as lateness. Otherwise a stale header refuses the message
  // without blaming the device (CheckHeader), and a non-OK result is the
  // reason the device was dropped (already logged and recorded).
  absl::Status SubmitOne(const std::string& host, const v1::BatchHeader& header,
                         const v1::DeviceMessage& message);
  // The host finished submitting this phase (its remaining devices are gone).
  void HostSubmitted(const std::string& host, const v1::BatchHeader& header);
  absl::Status ReportMetrics(const std::string& host, const v1::DeviceMetricsReport& report);

  // Closes whatever is due; true if the state changed.
  bool Advance(absl::Time now);
  // Fails the job from outside its state machine (e.g. the coordinator
  // caught an allocation failure while advancing it).
  void Abort(const std::string& why) { Fail(why); }
  // Iterations finished since the last call (for persistence).
  std::vector<v1::LflIterationRecord> TakeFinishedIterations();

  Stage stage() const { return stage_; }
  const std::string& error() const { return error_; }
  const std::string& job_id() const { return config_.job_id; }
  const v1::JobSpec& spec() const { return spec_; }
  int32_t iteration() const { return iteration_; }
  const mf::Matrix& model() const { return v_; }
  const v1::LflStatus& status() const { return status_; }

 private:
  struct Round {
    int number = 1;
    secagg::SessionConfig session;
    std::optional<secagg::ServerStateMachine> sa;
    secagg::Phase phase = secagg::Phase::kAdvertiseKeys;
    std::set<uint64_t> expected;                 // devices asked in this phase
    std::map<uint64_t, v1::InboxMessage> inbox;  // by recipient
    std::set<std::string> submitted;             // hosts done with this phase
    absl::Time phase_started;
    const crypto::FixedPointCodec* codec = nullptr;
    uint64_t key_session = 0;  // the key session the aggregation runs in (0: none)
  };

  LflJob(net::LflJobConfig config, v1::JobSpec spec, absl::Duration liveness);
  // sigma_v, z, the server view's z and epsilon for n devices into status_.
  absl::Status SetPrivacy(int64_t num_devices);
  void Fail(const std::string& why);
  bool Live(const std::string& host, absl::Time now) const;
  std::set<std::string> HostsOf(const std::set<uint64_t>& devices) const;
  absl::Status StartPretrain(absl::Time now);
  void StartRound(int number, std::vector<uint64_t> roster, int64_t min_survivors, absl::Time now);
  // LflSpec.secagg_session, once the job's key session is set up: round `r`
  // over `participants` (a subset of the setup's roster) with the setup's
  // graph and threshold. False if the session cannot carry it (then the
  // caller sets up a new one).
  bool StartSessionRound(Round& r, const std::vector<uint64_t>& participants,
                         int64_t min_survivors);
  bool PhaseDue(absl::Time now) const;
  void ClosePhase(absl::Time now);
  void FinishIteration(absl::Time now);
  void Drop(uint64_t device, const std::string& reason);
  bool AllReported(const std::set<std::string>& reported) const;

  net::LflJobConfig config_;
  v1::JobSpec spec_;
  absl::Duration liveness_;
  random::Csprng rng_;  // aggregation ids, graph seeds, server randomness
  Stage stage_ = Stage::kJoining;
  std::string error_;
  absl::Time stage_started_;
  std::map<std::string, absl::Time> last_seen_;
  std::map<std::string, std::set<uint64_t>> announced_;  // host -> devices
  std::vector<uint64_t> selected_;                       // D, sorted
  std::map<uint64_t, std::string> host_of_;              // over D
  lfl::TwoRoundParams dp_;
  std::optional<lfl::LflCodecs> codecs_;
  std::optional<mf::LearningRateSchedule> schedule_;
  mf::Matrix v_;
  int32_t iteration_ = 0;
  std::optional<Round> round_;
  // LflSpec.secagg_session: the server's side of the current key session
  // (common/secagg/session.h) and its id on the wire; null before the first
  // setup.
  std::shared_ptr<secagg::ServerSession> key_session_;
  uint64_t key_session_id_ = 0;
  int unmasking_threads_ = 1;
  // Devices the key session has lost: asked at the last round 1's check-in
  // but silent (a host that restarted has lost its keys; or a transient
  // dropout). With the selected devices that missed the setup, they decide
  // when to set up anew (KeySessionLost).
  int64_t key_session_silent_ = 0;
  // Whether the job should set up a new key session before a round 1 that
  // aborts below `min_survivors` (secagg::SessionShouldBeRenewed).
  bool KeySessionLost(int64_t min_survivors) const;
  log::LogThrottle drop_log_;
  std::vector<double> sum_;  // round-1 decoded sum of the current iteration
  v1::LflIterationRecord record_;
  absl::Time iteration_started_;
  std::vector<v1::LflIterationRecord> finished_;
  std::set<std::string> stage1_reported_, stage3_reported_;
  std::vector<mf::ErrorMetrics> stage1_parts_, stage3_parts_;
  v1::LflStatus status_;
};

const char* LflStageName(LflJob::Stage stage);

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_LFL_LFL_JOB_H_
