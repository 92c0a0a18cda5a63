#include "server/operator_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/net/credentials.h"
#include "common/pki/role.h"
#include "server/call_governor.h"

namespace fedmf::server {

using net::ToGrpc;

absl::StatusOr<std::string> OperatorService::CheckOperator(const grpc::ServerContext& ctx) {
  RETURN_IF_ERROR(CallAdmitted(ctx));
  if (insecure_) return std::string();
  ASSIGN_OR_RETURN(auto id, net::PeerIdentityOf(ctx));
  // Operators only: the server's own certificate is not an operator's.
  if (id.role != pki::Role::kOperator) {
    return absl::PermissionDeniedError(
        absl::StrCat("certificate '", id.name, "' has role ", pki::RoleToString(id.role),
                     "; operator commands need an operator certificate"));
  }
  return id.name;
}

grpc::Status OperatorService::SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* req,
                                        v1::SubmitJobResponse* resp) {
  auto submitter = CheckOperator(*ctx);
  if (!submitter.ok()) return ToGrpc(submitter.status());
  // Every setting's declared sizes and texts, before any job state is allocated.
  if (auto s = CheckJobSpecSizes(req->spec(), limits_); !s.ok()) return ToGrpc(s);
  if (auto s = CheckJobSpecText(req->spec()); !s.ok()) return ToGrpc(s);
  auto id = jobs_.RunnerFor(req->spec().setting())->SubmitJob(req->spec(), *submitter);
  if (!id.ok()) return ToGrpc(id.status());
  resp->set_job_id(*id);
  return grpc::Status::OK;
}

grpc::Status OperatorService::GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req,
                                     v1::JobStatus* resp) {
  if (auto s = CheckOperator(*ctx); !s.ok()) return ToGrpc(s.status());
  if (req->wait_seconds() > 0) {
    if (auto runner = jobs_.RunnerOf(req->job_id()); runner.ok() && (*runner)->WatchesJobs()) {
      // The long poll holds a thread like a party's GetTask: under the same
      // cap, and answered at once beyond it.
      PollLimiter::Slot slot;
      if (poll_limiter_ == nullptr || poll_limiter_->Acquire(&slot).ok()) {
        const double wait = std::min(req->wait_seconds(), kMaxJobWaitSeconds);
        (*runner)->AwaitJobChange(req->job_id(), req->known_state(), req->known_rounds(),
                                  absl::Seconds(wait));
      }
    }
  }
  auto status = jobs_.Get(req->job_id());
  if (!status.ok()) return ToGrpc(status.status());
  *resp = std::move(*status);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest*,
                                       v1::ListJobsResponse* resp) {
  if (auto s = CheckOperator(*ctx); !s.ok()) return ToGrpc(s.status());
  ServerWorkForCall working(*ctx);  // a long history is the server's time, not the caller's
  auto jobs = jobs_.List();
  if (!jobs.ok()) return ToGrpc(jobs.status());
  for (v1::JobStatus& job : *jobs) *resp->add_jobs() = std::move(job);
  return grpc::Status::OK;
}

grpc::Status OperatorService::CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest* req,
                                        v1::CancelJobResponse* resp) {
  auto by = CheckOperator(*ctx);
  if (!by.ok()) return ToGrpc(by.status());
  auto runner = jobs_.RunnerOf(req->job_id());
  if (!runner.ok()) return ToGrpc(runner.status());
  // Its submitter or an admin operator (admin_operators); in --insecure
  // mode there are no identities to tell apart.
  const bool admin = insecure_ || std::find(admins_.begin(), admins_.end(), *by) != admins_.end();
  auto was = (*runner)->CancelJob(req->job_id(), insecure_ ? "(insecure)" : *by, admin);
  if (!was.ok()) return ToGrpc(was.status());
  resp->set_previous_state(*was);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListParties(grpc::ServerContext* ctx, const v1::ListPartiesRequest*,
                                          v1::ListPartiesResponse* resp) {
  if (auto s = CheckOperator(*ctx); !s.ok()) return ToGrpc(s.status());
  *resp = jobs_.ListParties();
  return grpc::Status::OK;
}

}  // namespace fedmf::server
