// The coordination server's durable state in SQLite (WAL): jobs, each
// party's acceptance and reports, every closed round, and the shared matrix
// that the next round starts from. A round is committed in ONE transaction
// (record + matrix + job cursor), so `kill -9` at any point leaves either the
// round before or the round after, never half of one.
#ifndef FEDMF_SERVER_SERVER_STORE_H_
#define FEDMF_SERVER_SERVER_STORE_H_

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

namespace fedmf::server {

struct StoredParty {
  std::string name;
  bool replied = false;
  bool accepted = false;
  std::string refusal;
  double weight = 0;
  int32_t users = 0;
  int32_t items = 0;
  int32_t global_users = 0;
  int32_t global_items = 0;
  double epsilon = 0;
  double test_mse = -1;
  int64_t test_count = 0;
  int32_t last_round = -1;
  bool finished = false;
};

struct StoredJob {
  v1::JobSpec spec;
  v1::JobState state = v1::JOB_STATE_WAITING;
  int32_t round = 0;  // next round to run
  std::string error;
  std::optional<mf::Matrix> shared;  // input of `round` (absent while waiting)
  std::vector<StoredParty> parties;  // roster order
  std::vector<v1::RoundRecord> rounds;
  // The parties' reports by round (a round's may precede its record: a party
  // reports right after its upload, the round closes on the last one).
  std::map<int32_t, std::vector<v1::PartyRoundReport>> reports;
};

class ServerStore {
 public:
  static absl::StatusOr<std::unique_ptr<ServerStore>> Open(const std::string& path);

  // A new job in state WAITING with its roster. AlreadyExists for a known id.
  absl::Status CreateJob(const v1::JobSpec& spec);
  absl::Status SetJobState(const std::string& job_id, v1::JobState state,
                           const std::string& error = "");
  absl::Status SaveParty(const std::string& job_id, const StoredParty& party);
  // Starts Stage 2: the initial shared matrix and state RUNNING, atomically.
  absl::Status StartRunning(const std::string& job_id, const mf::Matrix& initial_shared);
  // Closes a round: its record, the next round's shared matrix and the job
  // cursor in one transaction.
  absl::Status CommitRound(const std::string& job_id, const v1::RoundRecord& record,
                           const mf::Matrix& next_shared);

  // A party's report after `round` (per-round history); a second report of
  // the same round replaces the first.
  absl::Status SaveRoundReport(const std::string& job_id, int32_t round,
                               const v1::PartyRoundReport& report);

  absl::StatusOr<StoredJob> LoadJob(const std::string& job_id) const;
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

#endif  // FEDMF_SERVER_SERVER_STORE_H_
