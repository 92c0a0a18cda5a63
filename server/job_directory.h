// Every job the server holds, whichever runner (server/job_runner.h) has it.
// The operator API and the dashboard read jobs through it, so both see the
// same statuses. Holds no lock of its own; the runners lock.
#ifndef FEDMF_SERVER_JOB_DIRECTORY_H_
#define FEDMF_SERVER_JOB_DIRECTORY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedmf/v1/federation.pb.h"
#include "server/job_runner.h"

namespace fedmf::server {

class JobDirectory {
 public:
  // Not owned; each must outlive the directory. The first runner also takes
  // the jobs no runner claims (it refuses them with its own reasons).
  explicit JobDirectory(std::vector<JobRunner*> runners) : runners_(std::move(runners)) {}

  const std::vector<JobRunner*>& runners() const { return runners_; }
  // The runner that takes jobs with `setting` (the first runner if none does).
  JobRunner* RunnerFor(v1::Setting setting) const;
  // The runner holding `job_id`, or NotFound.
  absl::StatusOr<JobRunner*> RunnerOf(const std::string& job_id) const;

  // One job with its per-round history; rounds_completed set. NotFound for
  // an unknown id.
  absl::StatusOr<v1::JobStatus> Get(const std::string& job_id) const;
  // Every job, runner by runner in their order, each runner's oldest first;
  // without the per-round history (rounds_completed tells how many).
  absl::StatusOr<std::vector<v1::JobStatus>> List() const;
  // Every runner's participants with their liveness.
  v1::ListPartiesResponse ListParties() const;

 private:
  // (runner, status) of `job_id`: the runners are asked last-registered
  // first (the device runners answer from memory; the cross-silo one reads
  // its database).
  absl::StatusOr<std::pair<JobRunner*, v1::JobStatus>> Find(const std::string& job_id) const;

  std::vector<JobRunner*> runners_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_JOB_DIRECTORY_H_
