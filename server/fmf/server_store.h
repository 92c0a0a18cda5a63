// The coordination server's durable state in SQLite (WAL): jobs, each
// party's acceptance and reports, every closed round, and the shared matrix
// that the next round starts from. A round is committed in ONE transaction
// (record + matrix + job cursor), so `kill -9` at any point leaves either the
// round before or the round after, never half of one.
#ifndef FEDMF_SERVER_FMF_SERVER_STORE_H_
#define FEDMF_SERVER_FMF_SERVER_STORE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mf/embeddings.h"
#include "common/store/sqlite.h"
#include "fedmf/v1/federation.pb.h"
#include "server/fmf/stored_job.h"

namespace fedmf::server {

class ServerStore {
 public:
  static absl::StatusOr<std::unique_ptr<ServerStore>> Open(const std::string& path);

  // A new job in state WAITING with its roster and the operator who
  // submitted it. AlreadyExists for a known id.
  absl::Status CreateJob(const v1::JobSpec& spec, const std::string& submitter = "");
  absl::Status SetJobState(const std::string& job_id, v1::JobState state,
                           const std::string& error = "");
  absl::Status SaveParty(const std::string& job_id, const StoredParty& party);
  // Starts Stage 2: the initial shared matrix and state RUNNING, atomically.
  absl::Status StartRunning(const std::string& job_id, const mf::Matrix& initial_shared);
  // Closes a round: its record, the next round's shared matrix and the job
  // cursor in one transaction.
  absl::Status CommitRound(const std::string& job_id, const v1::RoundRecord& record,
                           const mf::Matrix& next_shared);

  // A party's report after `round` (per-round history) and the party's record
  // it updates, in one transaction; a second report of the same round
  // replaces the first. Committed without a sync of its own (kDeferredSync):
  // a crash of the server keeps it, a power loss may roll back the reports
  // since the last synced commit (the next round's commit syncs them).
  absl::Status SaveRoundReport(const std::string& job_id, int32_t round,
                               const v1::PartyRoundReport& report, const StoredParty& party);

  absl::StatusOr<StoredJob> LoadJob(const std::string& job_id) const;
  // LoadJob without the shared matrix (job views: status, lists, dashboard).
  absl::StatusOr<StoredJob> LoadJobSummary(const std::string& job_id) const;
  // The job a restarted server must resume (WAITING or RUNNING), if any.
  absl::StatusOr<std::optional<std::string>> ActiveJobId() const;
  // Jobs in submission order (ids only).
  absl::StatusOr<std::vector<std::string>> JobIds() const;

 private:
  explicit ServerStore(std::unique_ptr<store::Database> db) : db_(std::move(db)) {}
  absl::Status SaveShared(const std::string& job_id, int32_t round, const mf::Matrix& m);

  std::unique_ptr<store::Database> db_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_FMF_SERVER_STORE_H_
