// The seam between the server's shared parts and its protocols: what every
// protocol's job runner offers the operator API, the dashboard and
// server_main. One runner per protocol folder (server/fmf: cross-silo
// VFL/HFL-SGDMF and coupling, server/lfl: LFL-SGDMF over device hosts,
// server/hua: Hua et al. S3); adding a protocol = one runner + one line in
// server_main.cc's runner list. The shared layer (this folder) only ever
// names this interface, never a protocol's classes.
#ifndef FEDMF_SERVER_JOB_RUNNER_H_
#define FEDMF_SERVER_JOB_RUNNER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::server {

class JobRunner {
 public:
  virtual ~JobRunner() = default;

  // Short name for logs and refusals: "cross-silo", "lfl", "hua-s3".
  virtual std::string_view kind() const = 0;
  // Whether jobs with this setting are this runner's.
  virtual bool Takes(v1::Setting setting) const = 0;

  // Resumes (or fails) what a previous run stored, starts the lifecycle.
  virtual absl::Status Start() = 0;
  // Ends the lifecycle and every parked call; idempotent.
  virtual void Stop() = 0;

  // ---- operators (the caller is authenticated; `submitter` is its
  // certificate name, "" in --insecure mode)
  virtual absl::StatusOr<std::string> SubmitJob(const v1::JobSpec& spec,
                                                const std::string& submitter) = 0;
  // The job with its per-round history; NotFound when it is not this
  // runner's.
  virtual absl::StatusOr<v1::JobStatus> GetJob(const std::string& job_id) = 0;
  // Every job of this runner, oldest first.
  virtual absl::StatusOr<std::vector<std::string>> JobIds() = 0;
  // Ends a job that has not ended; returns the state it had. By default a
  // runner's jobs end only at their own deadlines.
  virtual absl::StatusOr<v1::JobState> CancelJob(const std::string& job_id,
                                                 const std::string& /*by*/, bool /*admin*/) {
    return absl::UnimplementedError(absl::StrCat(
        "job '", job_id, "' is a device job (", std::string(kind()),
        "): cancel works for cross-silo jobs; device jobs end at their own deadlines"));
  }
  // GetJob's long poll (GetJobRequest.wait_seconds): returns once the job's
  // state or round count differs from the known ones, or after `wait`.
  // Runners without a watch return at once (the caller then answers now).
  virtual void AwaitJobChange(const std::string& /*job_id*/, v1::JobState /*known_state*/,
                              int32_t /*known_rounds*/, absl::Duration /*wait*/) {}
  // Whether AwaitJobChange waits (a long poll holds a thread: the operator
  // service takes a poll slot only for runners that do).
  virtual bool WatchesJobs() const { return false; }
  // The participants this runner knows, with their liveness, for the
  // operator's ListParties and the dashboard's front page.
  virtual v1::ListPartiesResponse ListParties() { return {}; }
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_JOB_RUNNER_H_
