#include "party/admin_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/net/credentials.h"

namespace fedmf::party {

absl::Status CheckAdminCaller(const pki::PeerIdentity& id,
                              const std::vector<std::string>& allowed) {
  // Only the caller's own name and role appear in the message: nothing about
  // the request, the party's users or its jobs.
  if (allowed.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("certificate '", id.name,
                     "' is refused: this party's admin endpoint admits no one "
                     "until its config lists operator certificate names in 'admin_operators'"));
  }
  if (id.role != pki::Role::kOperator ||
      std::find(allowed.begin(), allowed.end(), id.name) == allowed.end()) {
    return absl::PermissionDeniedError(
        absl::StrCat("certificate '", id.name,
                     "' is refused: this party's admin endpoint admits only the "
                     "operator certificates its config lists in 'admin_operators'"));
  }
  return absl::OkStatus();
}

grpc::Status AdminService::CheckCaller(const grpc::ServerContext& ctx) const {
  if (insecure_) return grpc::Status::OK;
  auto id = net::PeerIdentityOf(ctx);
  if (!id.ok()) return net::ToGrpc(id.status());
  return net::ToGrpc(CheckAdminCaller(*id, allowed_));
}

grpc::Status AdminService::Recommend(grpc::ServerContext* ctx, const v1::RecommendRequest* req,
                                     v1::RecommendResponse* resp) {
  if (auto s = CheckCaller(*ctx); !s.ok()) return s;
  if (req->top() < 1 || req->top() > 10000) {
    return net::ToGrpc(absl::InvalidArgumentError("field 'top': must be in [1, 10000]"));
  }
  auto recs = agent_->Recommend(req->job_id(), req->user(), req->top(), req->include_rated());
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

grpc::Status AdminService::ExportModel(grpc::ServerContext* ctx, const v1::ExportModelRequest* req,
                                       v1::ExportModelResponse* resp) {
  if (auto s = CheckCaller(*ctx); !s.ok()) return s;
  auto model = agent_->ExportModel(req->job_id());
  if (!model.ok()) return net::ToGrpc(model.status());
  *resp = std::move(*model);
  return grpc::Status::OK;
}

}  // namespace fedmf::party
