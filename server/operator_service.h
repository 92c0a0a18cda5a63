// gRPC edge of the operator API: authenticates the operator (its
// certificate's role), checks the job spec's sizes and texts, and hands the
// call to the job runner (server/job_runner.h) that takes the job's setting
// or holds the job. Knows no protocol by name.
#ifndef FEDMF_SERVER_OPERATOR_SERVICE_H_
#define FEDMF_SERVER_OPERATOR_SERVICE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "server/job_directory.h"
#include "server/job_runner.h"
#include "server/poll_limiter.h"
#include "server/size_limits.h"

namespace fedmf::server {

class OperatorService final : public v1::Operator::Service {
 public:
  // `runners` (not owned) must outlive the service; see JobDirectory for
  // their order. `limits` bound every submitted spec before a runner sees it.
  OperatorService(std::vector<JobRunner*> runners, SizeLimits limits, bool insecure)
      : jobs_(std::move(runners)), limits_(std::move(limits)), insecure_(insecure) {}

  grpc::Status SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* req,
                         v1::SubmitJobResponse* resp) override;
  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req,
                      v1::JobStatus* resp) override;
  grpc::Status ListParties(grpc::ServerContext* ctx, const v1::ListPartiesRequest* req,
                           v1::ListPartiesResponse* resp) override;
  grpc::Status ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req,
                        v1::ListJobsResponse* resp) override;
  grpc::Status CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest* req,
                         v1::CancelJobResponse* resp) override;

  // Operators (certificate names) that may cancel any job; the others cancel
  // only the jobs they submitted.
  void set_admin_operators(std::vector<std::string> names) { admins_ = std::move(names); }

  // Caps concurrent GetJob long polls (null = no cap); owned by the caller.
  void set_poll_limiter(PollLimiter* limiter) { poll_limiter_ = limiter; }
  // GetJobRequest.wait_seconds is capped here.
  static constexpr double kMaxJobWaitSeconds = 10;

 private:
  // The operator's certificate name ("" in --insecure mode), or why not.
  absl::StatusOr<std::string> CheckOperator(const grpc::ServerContext& ctx);

  JobDirectory jobs_;
  const SizeLimits limits_;
  bool insecure_;
  std::vector<std::string> admins_;
  PollLimiter* poll_limiter_ = nullptr;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_OPERATOR_SERVICE_H_
