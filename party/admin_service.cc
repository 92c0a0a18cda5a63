#include "party/admin_service.h"

#include "absl/strings/str_cat.h"
#include "common/net/credentials.h"

namespace fedmf::party {

grpc::Status AdminService::CheckCaller(const grpc::ServerContext& ctx) const {
  if (insecure_) return grpc::Status::OK;
  auto id = net::PeerIdentityOf(ctx);
  if (!id.ok()) return net::ToGrpc(id.status());
  if (id->role != pki::Role::kOperator) {
    return net::ToGrpc(absl::PermissionDeniedError(
        absl::StrCat("certificate '", id->name, "' is not an operator's")));
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::Recommend(grpc::ServerContext* ctx, const v1::RecommendRequest* req,
                                     v1::RecommendResponse* resp) {
  if (auto s = CheckCaller(*ctx); !s.ok()) return s;
  if (req->top() < 1 || req->top() > 10000) {
    return net::ToGrpc(absl::InvalidArgumentError("field 'top': must be in [1, 10000]"));
  }
  auto recs = agent_->Recommend(req->job_id(), req->user(), req->top());
  if (!recs.ok()) return net::ToGrpc(recs.status());
  for (const auto& [item, score] : *recs) {
    v1::Recommendation* r = resp->add_items();
    r->set_item(item);
    r->set_score(score);
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::Ledger(grpc::ServerContext* ctx, const v1::LedgerRequest*,
                                  v1::LedgerResponse* resp) {
  if (auto s = CheckCaller(*ctx); !s.ok()) return s;
  *resp = agent_->LedgerSnapshot();
  return grpc::Status::OK;
}

}  // namespace fedmf::party
