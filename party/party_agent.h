// fedmf-party's protocol loop. The party dials out: it long-polls the server
// for its next task and runs it on common/fmf's PartySession:
//
//   OFFER  -> policy check BEFORE any data is read -> accept (with sizes) | refuse
//   ROUND t -> (session absent: load data, Stage 1, join at t) -> download V/U(t)
//             -> T' DP iterations -> ledger charge + release persisted atomically
//             -> upload -> privacy report
//   FINISH -> download final -> Stage 3 locally -> report test MSE and epsilon
//   ABORT  -> drop the job's session
//
// Transport failures are retried with exponential backoff; a round whose
// release is already in the ledger is resent byte-for-byte, never recomputed.
#ifndef FEDMF_PARTY_PARTY_AGENT_H_
#define FEDMF_PARTY_PARTY_AGENT_H_

#include <atomic>
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
#include "common/coupling/owner_session.h"
#include "common/data/catalogue.h"
#include "common/data/loaders.h"
#include "common/data/ratings.h"
#include "common/dp/ledger.h"
#include "common/fmf/admitted_job.h"
#include "common/fmf/noise_plan.h"
#include "common/fmf/party_session.h"
#include "common/net/stop_canceller.h"
#include "common/pki/tls_files.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "party/party_config.h"
#include "party/party_store.h"

namespace fedmf::party {

class PartyAgent {
 public:
  PartyAgent(PartyConfig config, PartyStore* store, std::shared_ptr<grpc::Channel> channel);

  // Loads the durable ledger into memory.
  absl::Status Init();
  // Runs until *stop becomes true. `stop_fd`, if not -1, becomes readable
  // when it does (net::StopFd()): a stop then ends a long poll at once
  // without a thread polling the flag.
  void Run(const std::atomic<bool>* stop, int stop_fd = -1);

  // For the admin service (thread-safe).
  // Items the user rated are left out unless `include_rated`.
  absl::StatusOr<std::vector<std::pair<std::string, double>>> Recommend(const std::string& job_id,
                                                                        const std::string& user,
                                                                        int32_t top,
                                                                        bool include_rated = false);
  v1::LedgerResponse LedgerSnapshot();
  // This party's final model of a finished job ("" = the last), for its own
  // operator: ids as in its file, its private embeddings, what it rated.
  absl::StatusOr<v1::ExportModelResponse> ExportModel(const std::string& job_id);

 private:
  struct JobRun {
    std::string spec_digest;  // SHA-256 of the spec it was admitted with
    fmf::JobConfig config;
    fmf::NoisePlan plan;
    std::vector<std::string> user_ids;  // dense global id -> id in the file
    std::vector<std::string> item_ids;
    std::unique_ptr<fmf::PartySession> session;        // FMF settings
    std::unique_ptr<coupling::OwnerSession> coupling;  // Setting::kCoupling
    bool finished = false;

    // Rows and columns of the shared matrix (a coupling job: its flat model).
    std::pair<int32_t, int32_t> SharedShape() const;
    int64_t StepsCharged() const;
    mf::ErrorMetrics EvaluateTest() const;
  };

  absl::Status Register();
  // One Heartbeat RPC (from the BusyHeartbeat thread while a task is computed).
  void SendHeartbeat(const std::string& job_id);
  absl::Status HandleOffer(const v1::Task& task);
  // align_users jobs: the private set intersection, then the sizes.
  absl::Status HandleAlign(const v1::Task& task);
  // The private set intersection of an align_users job: the shared user ids.
  absl::StatusOr<std::vector<std::string>> AlignUsers(const v1::Task& task);
  // An accepting reply with the run's sizes.
  absl::Status ReplyWithSizes(const std::string& job_id, const JobRun& run);
  // The sizes an accepting OfferReply carries (docs/privacy.md, party-bytes):
  // the shared matrix's rows from a public source and a DP or declared
  // weight; never a count of the party's own file.
  struct OfferSizes {
    int32_t users = 0, items = 0, global_users = 0, global_items = 0;
  };
  OfferSizes SizesToDeclare(const JobRun& run) const;
  // `next` receives the task after this one when the upload's response
  // carries it (UploadResponse.next_task); left empty otherwise.
  absl::Status HandleRound(const v1::Task& task, std::optional<v1::Task>* next);
  // The release of `round`: computed, charged and persisted, or (already
  // charged before a crash or a lost response) the persisted bytes.
  absl::StatusOr<mf::Matrix> RoundRelease(JobRun& run, int32_t round, const mf::Matrix& shared);
  absl::Status HandleFinish(const v1::Task& task);
  // A coupling job's owner session (CreateRun's last step for kCoupling).
  absl::Status CreateCouplingOwner(fmf::AdmittedJob admitted, const data::Federation& federation,
                                   int32_t index, JobRun* run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The trust boundary: the server's spec -> a job validated against this
  // party's partners, range, policy and budget, with the party's own
  // randomness; the job id recorded for good (a second job under it is
  // refused). Its refusals are public (they name the rule and the fix).
  absl::StatusOr<fmf::AdmittedJob> Admit(const v1::JobSpec& spec);
  // Admit's checks, without recording the job id.
  absl::StatusOr<fmf::AdmittedJob> AdmitBySpec(const v1::JobSpec& spec);
  // The party's data, checked against its declared rating range.
  absl::StatusOr<data::Dataset> LoadOwnData() const;
  // The data Init validated if its source is unchanged since (handed over
  // once: the first job does not read the file a second time), else
  // LoadOwnData().
  absl::StatusOr<data::Dataset> TakeOwnData();
  // Admits the job, loads data and builds the session (Stage 1 not yet run).
  absl::StatusOr<JobRun*> CreateRun(const v1::JobSpec& spec);
  // The job's run, rebuilt from the task's spec if this process has none.
  absl::StatusOr<JobRun*> FindOrCreateRun(const v1::Task& task);
  absl::StatusOr<mf::Matrix> Download(const std::string& job_id, int32_t round, int32_t rows,
                                      int32_t cols);
  // A ROUND or FINISH task's shared matrix: inlined on the task, or downloaded.
  absl::StatusOr<mf::Matrix> SharedOf(const v1::Task& task, const JobRun& run);
  // Sends the round's update; `report`, if given, rides on the header chunk.
  // Returns whether the server took the report (if not, send it yourself).
  // With `next` the server is asked to wait for this party's next task and
  // return it on the response (set into *next when it did).
  absl::StatusOr<bool> Upload(const std::string& job_id, int32_t round, const mf::Matrix& m,
                              const v1::PrivacyReport* report, std::optional<v1::Task>* next);
  // The privacy report after `round` (its last release) or Stage 3.
  v1::PrivacyReport MakeReport(const std::string& job_id, int32_t round, const JobRun& run);
  absl::Status SendReport(const v1::PrivacyReport& report);
  double SpentEpsilonLocked(dp::LedgerUnit unit) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The run of a finished job ("" = the last one), for the admin service.
  absl::StatusOr<const JobRun*> FinishedRunLocked(const std::string& job_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  PartyConfig config_;
  PartyStore* store_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  int32_t max_chunk_values_ = 1 << 16;
  // A third of the server's liveness window (RegisterResponse), so two beats
  // can be lost before the server stops waiting for a busy party.
  std::atomic<int64_t> heartbeat_ms_{1000};
  // Run's canceller while Run is in its loop (a stop ends an upload that
  // waits for the next task as it ends GetTask's poll); used by Run's thread.
  net::StopCanceller* canceller_ = nullptr;

  absl::Mutex mu_;  // guards ledger_ and runs_ against the admin service
  dp::PrivacyLedger ledger_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, JobRun> runs_ ABSL_GUARDED_BY(mu_);
  // align_users jobs: this party's shared user ids in the canonical order,
  // from the job's private set intersection (kept for the job's lifetime in
  // this process; a restarted party is not rejoined to such a job).
  std::map<std::string, std::vector<std::string>> alignments_;
  // The data Init loaded and the stamp of its source taken before, until a
  // job takes it (TakeOwnData): an idle party holds its data set, which its
  // first job needs anyway.
  struct ValidatedData {
    data::DataSourceStamp stamp;
    data::Dataset dataset;
  };
  std::optional<ValidatedData> validated_data_ ABSL_GUARDED_BY(mu_);
  // data.catalogue, loaded at start.
  std::optional<data::Catalogue> catalogue_;
  // The party's certificate and key (unset with --insecure): PSI signatures.
  std::optional<pki::TlsFiles> tls_files_;
  std::string state_id_;  // party/state_id.h; set by Init, sent with Register
  std::string last_finished_job_ ABSL_GUARDED_BY(mu_);
  // The store's alignment_log, mirrored for the admin endpoint's thread.
  std::vector<PartyStore::AlignmentRecord> alignment_log_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_PARTY_AGENT_H_
