// The party's own admin endpoint (by default on loopback): recommendations
// from the party's private embeddings and its privacy ledger. Only the
// operators the party's config lists (admin_operators) reach it; the
// coordination server and every other operator of the federation never do.
#ifndef FEDMF_PARTY_ADMIN_SERVICE_H_
#define FEDMF_PARTY_ADMIN_SERVICE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/pki/identity.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "party/party_agent.h"

namespace fedmf::party {

// Whether the authenticated peer `id` may use the admin endpoint: its role is
// operator AND its certificate name is in `allowed`. Decided on the caller
// alone, before any request field is read, so a refused caller gets the same
// PERMISSION_DENIED for every request (no membership oracle). Pure.
absl::Status CheckAdminCaller(const pki::PeerIdentity& id, const std::vector<std::string>& allowed);

class AdminService final : public v1::PartyAdmin::Service {
 public:
  // `insecure`: no TLS, hence no identity: everyone is let in (testing only).
  AdminService(PartyAgent* agent, bool insecure, std::vector<std::string> allowed_operators)
      : agent_(agent), insecure_(insecure), allowed_(std::move(allowed_operators)) {}

  grpc::Status Recommend(grpc::ServerContext* ctx, const v1::RecommendRequest* req,
                         v1::RecommendResponse* resp) override;
  grpc::Status Ledger(grpc::ServerContext* ctx, const v1::LedgerRequest* req,
                      v1::LedgerResponse* resp) override;
  grpc::Status ExportModel(grpc::ServerContext* ctx, const v1::ExportModelRequest* req,
                           v1::ExportModelResponse* resp) override;

 private:
  grpc::Status CheckCaller(const grpc::ServerContext& ctx) const;
  PartyAgent* agent_;
  bool insecure_;
  std::vector<std::string> allowed_;
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_ADMIN_SERVICE_H_
