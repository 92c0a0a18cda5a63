// Durable record of LFL jobs, in tables of their own (lfl_*) in the server's
// SQLite database: the spec, the state, and every finished iteration with
// the V it produced, each iteration committed in one transaction.
// A restarted server reports an LFL job that was running as failed: the
// devices' Stage-2 state (u_i, secure-aggregation keys) lives in their hosts'
// memory and an aggregation cannot be resumed half-way.
#ifndef FEDMF_SERVER_LFL_LFL_STORE_H_
#define FEDMF_SERVER_LFL_LFL_STORE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/mf/embeddings.h"
#include "common/store/sqlite.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::server {

class LflStore {
 public:
  static absl::StatusOr<std::unique_ptr<LflStore>> Open(const std::string& path);

  absl::Status CreateJob(const v1::JobSpec& spec);
  // State, error and the status summary (metrics, ε) of a job.
  absl::Status SaveJob(const std::string& job_id, v1::JobState state, const std::string& error,
                       const v1::LflStatus& status);
  // One finished iteration and V(t+1), atomically with the job's status.
  absl::Status CommitIteration(const std::string& job_id, const v1::LflIterationRecord& record,
                               const mf::Matrix& next_v, const v1::LflStatus& status);
  // NotFound for an unknown id.
  absl::StatusOr<v1::JobStatus> LoadJob(const std::string& job_id) const;
  absl::StatusOr<std::vector<std::string>> RunningJobs() const;
  // Every LFL job, oldest first (fedmf job list).
  absl::StatusOr<std::vector<std::string>> JobIds() const;
  absl::StatusOr<bool> HasJob(const std::string& job_id) const;

 private:
  explicit LflStore(std::unique_ptr<store::Database> db) : db_(std::move(db)) {}
  std::unique_ptr<store::Database> db_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_LFL_LFL_STORE_H_
