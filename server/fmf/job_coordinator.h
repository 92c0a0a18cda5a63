// The coordination server's brain: the job queue, liveness, persistence and
// the long poll around the active job's state machine (server/fmf/fmf_job.h). No
// gRPC here: the service layer turns RPCs into these calls after
// authenticating the caller. Every transition the job makes is stored before
// the job goes on (server/fmf/server_store.h), so a restarted server resumes it.
#ifndef FEDMF_SERVER_FMF_JOB_COORDINATOR_H_
#define FEDMF_SERVER_FMF_JOB_COORDINATOR_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/mf/embeddings.h"
#include "fedmf/v1/federation.pb.h"
#include "server/clock.h"
#include "server/fmf/fmf_job.h"
#include "server/fmf/server_store.h"
#include "server/job_runner.h"
#include "server/lifecycle_loop.h"
#include "server/size_limits.h"

namespace fedmf::server {

// The job's own deadlines, limits and seed (FmfJobOptions, handed to every
// job as they are) plus what only the coordinator uses.
struct CoordinatorOptions : FmfJobOptions {
  absl::Duration poll = absl::Seconds(2);       // long-poll length
  absl::Duration liveness = absl::Seconds(10);  // silent longer = not waited for
  std::vector<std::string> allowed_parties;     // empty = any certified party
  // Called (under the coordinator's lock: keep it cheap) with every round
  // committed, e.g. to feed the round-latency histogram.
  std::function<void(const v1::RoundRecord&)> on_round;
  const Clock* clock = nullptr;  // protocol time (server/clock.h); null = the real clock
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

// The cross-silo runner (server/job_runner.h): VFL/HFL-SGDMF and coupling
// jobs over fedmf-party.
class JobCoordinator final : public JobRunner {
 public:
  JobCoordinator(ServerStore* store, CoordinatorOptions options);
  ~JobCoordinator() override;

  std::string_view kind() const override { return "cross-silo"; }
  bool Takes(v1::Setting setting) const override;

  // Loads the job a previous run left active, then starts the lifecycle thread.
  absl::Status Start() override;
  void Stop() override;

  // A second connection to the database for the job views (GetJob of an
  // ended job, JobIds): read without the coordinator's lock, so that an
  // operator's history never stalls the parties. Null = the main store,
  // under the lock (unit tests). Not owned.
  void set_history_store(ServerStore* history) { history_ = history; }

  // ---- operators
  // `submitter` = the operator's certificate name (may cancel it).
  absl::StatusOr<std::string> SubmitJob(const v1::JobSpec& spec,
                                        const std::string& submitter = "") override;
  absl::StatusOr<v1::JobStatus> GetJob(const std::string& job_id) override;
  // Returns once `job_id` is not the running job, or its state is not
  // `known_state`, or (known_rounds >= 0) its round records are not
  // `known_rounds` in number, or after `wait` (GetJobRequest's long poll).
  void AwaitJobChange(const std::string& job_id, v1::JobState known_state, int32_t known_rounds,
                      absl::Duration wait) override;
  bool WatchesJobs() const override { return true; }
  v1::ListPartiesResponse ListParties() override;
  // Every job in the database, oldest first.
  absl::StatusOr<std::vector<std::string>> JobIds() override;
  // Ends a queued, waiting or running job as FAILED ("cancelled by operator
  // <by>"); returns the state it had. FailedPrecondition for an ended job;
  // PermissionDenied unless `by` submitted it or `admin`.
  absl::StatusOr<v1::JobState> CancelJob(const std::string& job_id, const std::string& by,
                                         bool admin = true) override;

  // ---- parties (caller already authenticated as `party`)
  // `state_id` names the party's state directory (RegisterRequest.state_id):
  // a registration under a live name with another state_id is refused
  // (ALREADY_EXISTS); the same state_id is a restart and takes over.
  absl::Status Register(const std::string& party, const std::string& state_id);
  // A registered party is alive (busy with a task); unknown parties must Register first.
  absl::Status Heartbeat(const std::string& party);
  absl::Duration liveness() const { return options_.liveness; }
  bool AllowedParty(const std::string& party) const;  // options_.allowed_parties (empty = all)
  // OK if `party` may open an upload now: it is on the active job's roster
  // and a round takes its update. Checked before a byte of the stream is
  // read; the refusal tells a party outside the job nothing about it.
  absl::Status ExpectsUploadFrom(const std::string& party);
  const SizeLimits& limits() const { return options_.limits; }
  v1::Task GetTask(const std::string& party);
  absl::Status ReplyOffer(const std::string& party, const v1::OfferReply& reply);
  // The input matrix of `round` (round T = the final matrix for Stage 3),
  // shared, not copied: every party of a round is handed the same snapshot.
  absl::StatusOr<std::shared_ptr<const mf::Matrix>> SharedFor(const std::string& party,
                                                              const std::string& job_id,
                                                              int32_t round);
  // Shape an upload for (job, round) must have; checks roster and round.
  absl::StatusOr<std::pair<int32_t, int32_t>> UploadShape(const std::string& party,
                                                          const std::string& job_id, int32_t round);
  absl::Status SubmitUpdate(const std::string& party, const std::string& job_id, int32_t round,
                            const mf::Matrix& update);
  absl::Status ReportPrivacy(const std::string& party, const v1::PrivacyReport& report);
  // An align_users job's private set intersection (server/fmf/psi_alignment.h).
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

  // One step of the lifecycle at `now` (the active job's Advance, then what
  // it asks to store); returns true if it changed state. Run by loop_.
  bool AdvanceLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Loads the oldest active job. Stored state that violates the size limits
  // or cannot be restored fails that job (with the reason) and moves on: a
  // restart never crash-loops on what a previous run stored. Only a storage
  // failure is returned.
  absl::Status LoadActiveLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status LoadJobLocked(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailJobLocked(const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool LiveLocked(const std::string& party) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The operator's view of `stored` with the live parts (liveness, traffic,
  // the job ahead of it) filled in.
  v1::JobStatus StatusLocked(const StoredJob& stored) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a round (or Stage 3) should still wait for `party`: it is live,
  // or the server restarted less than one liveness window ago.
  bool AwaitedLocked(const std::string& party, absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  v1::Task ComputeTaskLocked(const std::string& party) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A state change both the parked calls and the lifecycle must see.
  void NotifyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int32_t> RosterIndexLocked(const std::string& party,
                                            const std::string& job_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ServerStore* store_;              // not owned; outlives this
  ServerStore* history_ = nullptr;  // not owned; see set_history_store
  const CoordinatorOptions options_;

  absl::Mutex mu_;
  // The lifecycle thread and the long poll: parked GetTask/PsiFetch calls and
  // job watches wait in loop_.Park (a task or a PSI message may be new); the
  // thread steps AdvanceLocked. NotifyLocked() wakes both.
  LifecycleLoop loop_;
  std::optional<FmfJob> job_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> last_seen_ ABSL_GUARDED_BY(mu_);
  // party -> state_id of its registration
  std::map<std::string, std::string> state_ids_ ABSL_GUARDED_BY(mu_);
  // After a restart the server has no memory of who was connected; until
  // this time every acceptor is waited for as if live (see Start()).
  absl::Time resume_grace_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // Parties of the last failed job that still need to hear ABORT.
  std::string aborted_job_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool> abort_pending_ ABSL_GUARDED_BY(mu_);
  CoordinatorCounters counters_ ABSL_GUARDED_BY(mu_);
  // (job, party)
  std::map<std::pair<std::string, std::string>, Traffic> traffic_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_FMF_JOB_COORDINATOR_H_
