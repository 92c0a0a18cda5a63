// The coordination server's brain: the job queue, the per-job lifecycle and
// what each party should do next. No gRPC here: the service layer turns RPCs
// into these calls after authenticating the caller.
//
// Job lifecycle (persisted at every transition):
//   WAITING  -- all roster parties replied to the offer, or the offer deadline
//               passed --> RUNNING (enough acceptors) | FAILED
//   RUNNING(round t < T) -- every live acceptor uploaded, or the round
//               deadline passed --> weighted average, commit --> RUNNING(t+1)
//   RUNNING(round T) -- every live acceptor finished Stage 3, or the finish
//               deadline passed --> FINISHED
// A party's next task is a pure function of this state (ComputeTask), so a
// party that reconnects or restarts simply asks again.
#ifndef FEDMF_SERVER_JOB_COORDINATOR_H_
#define FEDMF_SERVER_JOB_COORDINATOR_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/fmf/job_config.h"
#include "common/fmf/server_session.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"
#include "fedmf/v1/federation.pb.h"
#include "server/psi_alignment.h"
#include "server/server_store.h"
#include "server/size_limits.h"

namespace fedmf::server {

struct CoordinatorOptions {
  absl::Duration poll = absl::Seconds(2);       // long-poll length
  absl::Duration liveness = absl::Seconds(10);  // silent longer = not waited for
  absl::Duration offer_deadline = absl::Seconds(60);
  absl::Duration finish_deadline = absl::Seconds(120);
  absl::Duration default_round_deadline = absl::Seconds(120);
  std::vector<std::string> allowed_parties;  // empty = any certified party
  // Local reproducibility seed of the server's own randomness (initial shared
  // matrix); unset = OS entropy. Jobs never carry one.
  std::optional<uint64_t> seed;
  // Called (under the coordinator's lock: keep it cheap) with every round
  // committed, e.g. to feed the round-latency histogram.
  std::function<void(const v1::RoundRecord&)> on_round;
  // Upper bounds on what a party or operator may declare (server/size_limits.h).
  SizeLimits limits;
};

// Observability hooks (metrics are wired by the daemon).
struct CoordinatorCounters {
  int64_t rounds_completed = 0;
  int64_t jobs_finished = 0;
  int64_t jobs_failed = 0;
  int64_t updates_rejected = 0;
  int64_t dropouts = 0;            // accepted parties missing from a committed round
  int64_t aggregation_aborts = 0;  // jobs failed after their rounds had started
  // ε each party last reported (any job), for the per-party gauge.
  std::map<std::string, double> epsilon_by_party;
};

class JobCoordinator {
 public:
  JobCoordinator(ServerStore* store, CoordinatorOptions options);
  ~JobCoordinator();

  // Loads the job a previous run left active, then starts the runner thread.
  absl::Status Start();
  void Stop();

  // ---- operators
  absl::StatusOr<std::string> SubmitJob(const v1::JobSpec& spec);
  absl::StatusOr<v1::JobStatus> GetJob(const std::string& job_id);
  v1::ListPartiesResponse ListParties();
  // Every job in the database, oldest first.
  absl::StatusOr<std::vector<std::string>> JobIds();
  // Ends a queued, waiting or running job as FAILED ("cancelled by operator
  // <by>"); returns the state it had. FailedPrecondition for an ended job.
  absl::StatusOr<v1::JobState> CancelJob(const std::string& job_id, const std::string& by);

  // ---- parties (caller already authenticated as `party`)
  // `state_id` names the party's state directory (RegisterRequest.state_id):
  // a registration under a live name with another state_id is refused
  // (ALREADY_EXISTS); the same state_id is a restart and takes over.
  absl::Status Register(const std::string& party, const std::string& state_id);
  // A registered party is alive (busy with a task); unknown parties must Register first.
  absl::Status Heartbeat(const std::string& party);
  absl::Duration liveness() const { return options_.liveness; }
  const SizeLimits& limits() const { return options_.limits; }
  v1::Task GetTask(const std::string& party);
  absl::Status ReplyOffer(const std::string& party, const v1::OfferReply& reply);
  // The input matrix of `round` (round T = the final matrix for Stage 3).
  absl::StatusOr<mf::Matrix> SharedFor(const std::string& party, const std::string& job_id,
                                       int32_t round);
  // Shape an upload for (job, round) must have; checks roster and round.
  absl::StatusOr<std::pair<int32_t, int32_t>> UploadShape(const std::string& party,
                                                          const std::string& job_id, int32_t round);
  absl::Status SubmitUpdate(const std::string& party, const std::string& job_id, int32_t round,
                            const mf::Matrix& update);
  absl::Status ReportPrivacy(const std::string& party, const v1::PrivacyReport& report);
  // An align_users job's private set intersection (server/psi_alignment.h).
  absl::Status PsiSend(const std::string& party, const v1::PsiSendRequest& request);
  // Long poll like GetTask: returns what is new for `party`, or empty.
  absl::StatusOr<v1::PsiFetchResponse> PsiFetch(const std::string& party,
                                                const v1::PsiFetchRequest& request);

  CoordinatorCounters counters();

  // Adds one matrix stream's serialized bytes to (job, party)'s traffic,
  // reported as PartyStatus.bytes_up/bytes_down (since this process started).
  void CountMatrixTraffic(const std::string& job_id, const std::string& party, int64_t up,
                          int64_t down);

 private:
  struct Traffic {
    int64_t up = 0;
    int64_t down = 0;
  };

  struct ActiveJob {
    StoredJob stored;
    fmf::JobConfig config;
    std::optional<fmf::ServerSession> session;
    absl::Time phase_started;
    absl::Duration round_deadline;
    std::map<std::string, int32_t> index;  // party name -> roster index
    // align_users jobs: who accepted the offer (sizes follow after the
    // alignment, in a second reply), and the alignment once all did. Kept in
    // memory only: a restarted server offers the job again and the parties
    // run a new intersection under a new session.
    std::set<std::string> psi_accepted;
    std::optional<PsiAlignment> psi;
  };

  void RunLoop();
  // One step of the lifecycle; returns true if it changed state.
  bool AdvanceLocked(std::unique_lock<std::mutex>& lock);
  // Loads the oldest active job. Stored state that violates the size limits
  // or cannot be restored fails that job (with the reason) and moves on: a
  // restart never crash-loops on what a previous run stored. Only a storage
  // failure is returned.
  absl::Status LoadActiveLocked();
  absl::Status LoadJobLocked(const std::string& id);
  void FailJobLocked(const std::string& why);
  bool LiveLocked(const std::string& party) const;
  bool AllowedParty(const std::string& party) const;  // options_.allowed_parties (empty = all)
  // Whether a round (or Stage 3) should still wait for `party`: it is live,
  // or the server restarted less than one liveness window ago.
  bool AwaitedLocked(const std::string& party, absl::Time now) const;
  v1::Task ComputeTaskLocked(const std::string& party) const;
  absl::StatusOr<int32_t> RosterIndexLocked(const std::string& party,
                                            const std::string& job_id) const;
  absl::Status StartRunningLocked();
  // align_users jobs in WAITING: start the alignment once every roster party
  // accepted, fail the job on a refusal or a deadline. Returns true if it
  // changed state; *waiting is set while the job must not start yet.
  bool AdvanceAlignmentLocked(absl::Time now, bool* waiting);
  void SaveStatusLocked(int32_t idx);

  ServerStore* store_;
  CoordinatorOptions options_;

  std::mutex mu_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::thread runner_;
  std::optional<ActiveJob> job_;
  std::map<std::string, absl::Time> last_seen_;
  std::map<std::string, std::string> state_ids_;  // party -> state_id of its registration
  // After a restart the server has no memory of who was connected; until
  // this time every acceptor is waited for as if live (see Start()).
  absl::Time resume_grace_until_ = absl::InfinitePast();
  // Parties of the last failed job that still need to hear ABORT.
  std::string aborted_job_;
  std::map<std::string, bool> abort_pending_;
  CoordinatorCounters counters_;
  std::map<std::pair<std::string, std::string>, Traffic> traffic_;  // (job, party)
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_JOB_COORDINATOR_H_
