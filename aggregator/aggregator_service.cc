#include "aggregator/aggregator_service.h"

#include "absl/strings/str_cat.h"
#include "aggregator/aggregator_round.h"
#include "common/hua/wire/hua_codec.h"
#include "common/log/log.h"
#include "common/net/caller.h"
#include "common/net/credentials.h"
#include "common/random/csprng.h"

namespace fedmf::server {

using net::ToGrpc;

namespace {

bool SameRound(const v1::HuaFlushRequest& open, v1::HuaPhase phase, int32_t round, int32_t pass) {
  return open.phase() == phase && open.round() == round && open.pass() == pass;
}

}  // namespace

absl::StatusOr<std::string> AggregatorService::Caller(const grpc::ServerContext& ctx,
                                                      pki::Role role, const std::string& claimed) {
  // Server and operator calls carry no name; device hosts name themselves.
  const bool device = role == pki::Role::kDevice;
  const std::string serves = device ? "device hosts" : pki::RoleToString(role);
  return net::AuthorizeCaller(ctx, options_.insecure, {role, device ? "host" : "", serves},
                              claimed);
}

grpc::Status AggregatorService::Begin(grpc::ServerContext* ctx, const v1::HuaPlan* req,
                                      v1::HuaAck*) {
  if (auto c = Caller(*ctx, pki::Role::kServer, ""); !c.ok()) return ToGrpc(c.status());
  auto planned = PlanFromWire(*req);
  if (!planned.ok()) return ToGrpc(planned.status());
  absl::MutexLock lock(&mu_);
  Job& job = jobs_[req->job_id()];
  if (!job.third_party.has_value()) {
    // alpha_j comes from the OS CSPRNG: it must be secret from the server.
    auto tp = hua::ThirdParty::Create(hua::Scenario::kDynamic, req->dim(),
                                      random::Csprng::FromOsEntropy());
    if (!tp.ok()) return ToGrpc(tp.status());
    job.third_party.emplace(std::move(*tp));
    job.dim = req->dim();
  } else if (job.dim != req->dim()) {
    return ToGrpc(absl::InvalidArgumentError(
        absl::StrCat("field 'dim': ", req->dim(), ", the job's is ", job.dim)));
  }
  if (job.open.has_value()) {
    // The server restarted the round (e.g. after its own restart): the
    // partial sums of the abandoned one are dropped, never forwarded.
    spdlog::warn("job '{}': round {}/{} replaced before its flush", req->job_id(),
                 job.open->round(), job.open->pass());
    (void)job.third_party->Flush();  // the abandoned round's sums: dropped on purpose
    job.open.reset();
  }
  if (auto s = job.third_party->Begin(planned->plan); !s.ok()) return ToGrpc(s);
  v1::HuaFlushRequest header;
  header.set_job_id(req->job_id());
  header.set_phase(req->phase());
  header.set_round(req->round());
  header.set_pass(req->pass());
  job.open = header;
  job.hosts = std::move(planned->hosts);
  return grpc::Status::OK;
}

grpc::Status AggregatorService::Submit(grpc::ServerContext* ctx, const v1::HuaReportBatch* req,
                                       v1::HuaSubmitResponse* resp) {
  counters_.bytes_in += static_cast<int64_t>(req->ByteSizeLong());
  auto host = Caller(*ctx, pki::Role::kDevice, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  if (host->empty()) return ToGrpc(absl::InvalidArgumentError("field 'host': required"));
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(req->job_id());
  if (it == jobs_.end() || !it->second.open.has_value()) {
    return ToGrpc(absl::FailedPreconditionError(
        absl::StrCat("job '", req->job_id(), "' has no open round at the aggregator")));
  }
  Job& job = it->second;
  if (!SameRound(*job.open, req->phase(), req->round(), req->pass())) {
    return ToGrpc(absl::FailedPreconditionError(
        absl::StrCat("reports for round ", req->round(), " pass ", req->pass(),
                     "; the open round is ", job.open->round(), " pass ", job.open->pass())));
  }
  v1::HuaReportBatch kept;  // --record-for-tests
  for (const v1::HuaMaskedReport& r : req->reports()) {
    auto reject = [&](const std::string& why) {
      ++counters_.reports_rejected;
      resp->add_rejected(absl::StrCat("user ", r.user(), ": ", why));
    };
    if (auto s = AcceptReport(job.hosts, *host, r, *req, job.dim, *job.third_party); !s.ok()) {
      reject(std::string(s.message()));
      continue;
    }
    ++counters_.reports_accepted;
    resp->add_accepted(r.user());
    if (options_.record_for_tests) *kept.add_reports() = r;
  }
  if (options_.record_for_tests && kept.reports_size() > 0) {
    kept.set_host(*host);
    kept.set_job_id(req->job_id());
    kept.set_phase(req->phase());
    kept.set_round(req->round());
    kept.set_pass(req->pass());
    job.recorded.push_back(std::move(kept));
  }
  if (resp->rejected_size() > 0) {
    spdlog::warn("job '{}' round {}/{}: host '{}': {} report(s) rejected, first: {}", req->job_id(),
                 req->round(), req->pass(), *host, resp->rejected_size(), resp->rejected(0));
  }
  return grpc::Status::OK;
}

grpc::Status AggregatorService::Flush(grpc::ServerContext* ctx, const v1::HuaFlushRequest* req,
                                      v1::HuaForward* resp) {
  if (auto c = Caller(*ctx, pki::Role::kServer, ""); !c.ok()) return ToGrpc(c.status());
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(req->job_id());
  if (it == jobs_.end() || !it->second.open.has_value() ||
      !SameRound(*it->second.open, req->phase(), req->round(), req->pass())) {
    return ToGrpc(absl::FailedPreconditionError(absl::StrCat("job '", req->job_id(), "': round ",
                                                             req->round(), " pass ", req->pass(),
                                                             " is not open at the aggregator")));
  }
  Job& job = it->second;
  auto forward = job.third_party->Flush();
  job.open.reset();
  job.hosts.clear();
  if (!forward.ok()) return ToGrpc(forward.status());
  counters_.sums_forwarded += static_cast<int64_t>(forward->items.size());
  *resp = net::ToWire(req->job_id(), *forward);
  return grpc::Status::OK;
}

grpc::Status AggregatorService::EndJob(grpc::ServerContext* ctx, const v1::HuaEndJobRequest* req,
                                       v1::HuaAck*) {
  if (auto c = Caller(*ctx, pki::Role::kServer, ""); !c.ok()) return ToGrpc(c.status());
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(req->job_id());
  if (it == jobs_.end()) return grpc::Status::OK;
  if (options_.record_for_tests) {
    // Keep only the test record; alpha_j and any round state go.
    it->second.third_party.reset();
    it->second.open.reset();
    it->second.hosts.clear();
  } else {
    jobs_.erase(it);
  }
  return grpc::Status::OK;
}

grpc::Status AggregatorService::Recorded(grpc::ServerContext* ctx,
                                         const v1::HuaRecordedRequest* req,
                                         v1::HuaRecordedResponse* resp) {
  if (auto c = Caller(*ctx, pki::Role::kOperator, ""); !c.ok()) return ToGrpc(c.status());
  if (!options_.record_for_tests) {
    return ToGrpc(absl::FailedPreconditionError(
        "this aggregator keeps nothing: start it with --record-for-tests to record reports"));
  }
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(req->job_id());
  if (it == jobs_.end()) return grpc::Status::OK;
  for (const v1::HuaReportBatch& b : it->second.recorded) *resp->add_batches() = b;
  return grpc::Status::OK;
}

}  // namespace fedmf::server
