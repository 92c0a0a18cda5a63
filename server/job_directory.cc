#include "server/job_directory.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "server/fmf/job_coordinator.h"
#include "server/hua/hua_runner.h"
#include "server/lfl/lfl_coordinator.h"

namespace fedmf::server {

absl::StatusOr<v1::JobStatus> JobDirectory::Get(const std::string& job_id) const {
  absl::StatusOr<v1::JobStatus> status =
      absl::NotFoundError(absl::StrCat("no job '", base::EscapePeerText(job_id, 128), "'"));
  if (hua_ != nullptr && hua_->Has(job_id)) status = hua_->Status(job_id);
  if (absl::IsNotFound(status.status()) && lfl_ != nullptr) status = lfl_->GetJob(job_id);
  if (absl::IsNotFound(status.status())) status = fmf_->GetJob(job_id);
  if (status.ok()) {
    status->set_rounds_completed(std::max(status->rounds_completed(), status->rounds_size()));
  }
  return status;
}

absl::StatusOr<std::vector<v1::JobStatus>> JobDirectory::List() const {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, fmf_->JobIds());
  if (lfl_ != nullptr) {
    ASSIGN_OR_RETURN(std::vector<std::string> lfl_ids, lfl_->JobIds());
    ids.insert(ids.end(), lfl_ids.begin(), lfl_ids.end());
  }
  if (hua_ != nullptr) {
    for (std::string& id : hua_->JobIds()) ids.push_back(std::move(id));
  }
  std::vector<v1::JobStatus> jobs;
  for (const std::string& id : ids) {
    ASSIGN_OR_RETURN(v1::JobStatus status, Get(id));
    status.clear_rounds();  // the list stays small; Get has the history
    jobs.push_back(std::move(status));
  }
  return jobs;
}

bool JobDirectory::IsDeviceJob(const std::string& job_id) const {
  return (hua_ != nullptr && hua_->Has(job_id)) || (lfl_ != nullptr && lfl_->GetJob(job_id).ok());
}

}  // namespace fedmf::server
