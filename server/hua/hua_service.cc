#include "server/hua/hua_service.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/wire/hua_codec.h"
#include "common/log/log.h"
#include "common/net/caller.h"
#include "common/net/client_context.h"
#include "server/call_governor.h"

namespace fedmf::server {

using net::FromGrpc;
using net::ToGrpc;

namespace {

class GrpcAggregatorLink final : public AggregatorLink {
 public:
  explicit GrpcAggregatorLink(std::shared_ptr<grpc::Channel> channel)
      : stub_(v1::HuaAggregator::NewStub(channel)) {}

  absl::Status Begin(const std::string& job_id, int32_t dim, const hua::AggregationPlan& plan,
                     const std::map<int32_t, std::string>& hosts) override {
    v1::HuaPlan req = net::ToWire(job_id, dim, plan);
    for (const auto& [user, host] : hosts) {
      v1::HuaPlannedUser* u = req.add_users();
      u->set_user(user);
      u->set_host(host);
    }
    v1::HuaAck resp;
    auto ctx = net::DeadlineContext(absl::Seconds(30));
    return FromGrpc(stub_->Begin(ctx.get(), req, &resp));
  }

  absl::StatusOr<hua::AggregateForward> Flush(const std::string& job_id, int32_t dim,
                                              hua::Phase phase, int32_t round,
                                              int32_t pass) override {
    v1::HuaFlushRequest req;
    req.set_job_id(job_id);
    req.set_phase(net::ToWire(phase));
    req.set_round(round);
    req.set_pass(pass);
    v1::HuaForward resp;
    auto ctx = net::DeadlineContext(absl::Seconds(30));
    RETURN_IF_ERROR(FromGrpc(stub_->Flush(ctx.get(), req, &resp)));
    if (resp.job_id() != job_id) {
      return absl::InvalidArgumentError("the aggregator answered for another job");
    }
    return net::FromWire(resp, dim);
  }

  absl::Status EndJob(const std::string& job_id) override {
    v1::HuaEndJobRequest req;
    req.set_job_id(job_id);
    v1::HuaAck resp;
    auto ctx = net::DeadlineContext(absl::Seconds(10));
    return FromGrpc(stub_->EndJob(ctx.get(), req, &resp));
  }

 private:
  std::unique_ptr<v1::HuaAggregator::Stub> stub_;
};

}  // namespace

AggregatorLinkFactory MakeGrpcAggregatorLinks(net::TlsConfig tls,
                                              std::string aggregator_cert_name) {
  return [tls, aggregator_cert_name](
             const std::string& address) -> absl::StatusOr<std::unique_ptr<AggregatorLink>> {
    auto channel = net::MakeChannel(
        address, tls, net::ExpectedPeer{aggregator_cert_name, pki::Role::kAggregator});
    if (!channel.ok()) return channel.status();
    return std::unique_ptr<AggregatorLink>(new GrpcAggregatorLink(*channel));
  };
}

absl::StatusOr<std::string> HuaRecommenderService::Caller(const grpc::ServerContext& ctx,
                                                          const std::string& claimed) {
  RETURN_IF_ERROR(CallAdmitted(ctx));  // the caller's quota (server/call_governor.h)
  return net::AuthorizeCaller(ctx, insecure_, {pki::Role::kDevice, "host", "device hosts"},
                              claimed);
}

grpc::Status HuaRecommenderService::GetJob(grpc::ServerContext* ctx, const v1::HuaJobQuery* req,
                                           v1::HuaJobOffer* resp) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  *resp = runner_->Offer(*host);
  return grpc::Status::OK;
}

grpc::Status HuaRecommenderService::Register(grpc::ServerContext* ctx,
                                             const v1::HuaRegisterRequest* req,
                                             v1::HuaRegisterResponse* resp) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  std::vector<hua::UserHello> users;
  for (const v1::HuaUserHello& u : req->users()) {
    users.push_back({u.user(), std::vector<int32_t>(u.items().begin(), u.items().end())});
  }
  auto n = runner_->Register(*host, req->job_id(), users);
  if (!n.ok()) return ToGrpc(n.status());
  resp->set_registered(*n);
  return grpc::Status::OK;
}

grpc::Status HuaRecommenderService::Poll(grpc::ServerContext* ctx, const v1::HuaPollRequest* req,
                                         v1::HuaTasks* resp) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  PollLimiter::Slot slot;
  if (poll_limiter_ != nullptr) {
    if (auto s = poll_limiter_->Acquire(&slot); !s.ok()) return ToGrpc(s);
  }
  auto t = runner_->Poll(*host, req->job_id());
  if (!t.ok()) return ToGrpc(t.status());
  *resp = std::move(*t);
  return grpc::Status::OK;
}

grpc::Status HuaRecommenderService::Done(grpc::ServerContext* ctx, const v1::HuaDoneRequest* req,
                                         v1::HuaAck*) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  return ToGrpc(runner_->Done(*host, *req));
}

grpc::Status HuaRecommenderService::FinalItems(grpc::ServerContext* ctx,
                                               const v1::HuaFinalItemsRequest* req,
                                               v1::HuaFinalItems* resp) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  auto v = runner_->FinalItems(*host, req->job_id());
  if (!v.ok()) return ToGrpc(v.status());
  *resp = std::move(*v);
  return grpc::Status::OK;
}

grpc::Status HuaRecommenderService::ReportResult(grpc::ServerContext* ctx,
                                                 const v1::HuaResultReport* req, v1::HuaAck*) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  return ToGrpc(runner_->ReportResult(*host, *req));
}

}  // namespace fedmf::server
