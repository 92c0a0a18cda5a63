// Every job the server holds, whichever runner has it: cross-silo FMF jobs
// (JobCoordinator), LFL device jobs (LflCoordinator), Hua S3 jobs
// (HuaRunner). The operator API and the dashboard read jobs through it, so
// both see the same statuses. Holds no lock of its own; the runners lock.
#ifndef FEDMF_SERVER_JOB_DIRECTORY_H_
#define FEDMF_SERVER_JOB_DIRECTORY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::server {

class JobCoordinator;
class LflCoordinator;
class HuaRunner;

class JobDirectory {
 public:
  // Not owned; each must outlive the directory. `lfl` and `hua` may be null
  // (a server without those runners).
  JobDirectory(JobCoordinator* fmf, LflCoordinator* lfl, HuaRunner* hua)
      : fmf_(fmf), lfl_(lfl), hua_(hua) {}

  // One job with its per-round history; rounds_completed set. NotFound for
  // an unknown id.
  absl::StatusOr<v1::JobStatus> Get(const std::string& job_id) const;
  // Every job, FMF jobs in submission order, then LFL, then Hua; without the
  // per-round history (rounds_completed tells how many).
  absl::StatusOr<std::vector<v1::JobStatus>> List() const;
  // Whether the job is a device job (LFL or Hua S3).
  bool IsDeviceJob(const std::string& job_id) const;

 private:
  JobCoordinator* fmf_;
  LflCoordinator* lfl_;
  HuaRunner* hua_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_JOB_DIRECTORY_H_
