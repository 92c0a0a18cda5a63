#include "server/job_directory.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"

namespace fedmf::server {

JobRunner* JobDirectory::RunnerFor(v1::Setting setting) const {
  for (JobRunner* runner : runners_) {
    if (runner->Takes(setting)) return runner;
  }
  return runners_.front();
}

absl::StatusOr<std::pair<JobRunner*, v1::JobStatus>> JobDirectory::Find(
    const std::string& job_id) const {
  for (auto it = runners_.rbegin(); it != runners_.rend(); ++it) {
    absl::StatusOr<v1::JobStatus> status = (*it)->GetJob(job_id);
    if (status.ok()) return std::make_pair(*it, *std::move(status));
    if (!absl::IsNotFound(status.status())) return status.status();
  }
  return absl::NotFoundError(absl::StrCat("no job '", base::EscapePeerText(job_id, 128), "'"));
}

absl::StatusOr<JobRunner*> JobDirectory::RunnerOf(const std::string& job_id) const {
  ASSIGN_OR_RETURN(auto found, Find(job_id));
  return found.first;
}

absl::StatusOr<v1::JobStatus> JobDirectory::Get(const std::string& job_id) const {
  ASSIGN_OR_RETURN(auto found, Find(job_id));
  v1::JobStatus& status = found.second;
  status.set_rounds_completed(std::max(status.rounds_completed(), status.rounds_size()));
  return std::move(status);
}

absl::StatusOr<std::vector<v1::JobStatus>> JobDirectory::List() const {
  std::vector<v1::JobStatus> jobs;
  for (JobRunner* runner : runners_) {
    ASSIGN_OR_RETURN(std::vector<std::string> ids, runner->JobIds());
    for (const std::string& id : ids) {
      ASSIGN_OR_RETURN(v1::JobStatus status, Get(id));
      status.clear_rounds();  // the list stays small; Get has the history
      jobs.push_back(std::move(status));
    }
  }
  return jobs;
}

v1::ListPartiesResponse JobDirectory::ListParties() const {
  v1::ListPartiesResponse all;
  for (JobRunner* runner : runners_) all.MergeFrom(runner->ListParties());
  return all;
}

}  // namespace fedmf::server
