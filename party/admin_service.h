// The party's own admin endpoint (by default on loopback): recommendations
// from the party's private embeddings and its privacy ledger. Operators of
// the party reach it; the coordination server never does.
#ifndef FEDMF_PARTY_ADMIN_SERVICE_H_
#define FEDMF_PARTY_ADMIN_SERVICE_H_

#include "fedmf/v1/federation.grpc.pb.h"
#include "party/party_agent.h"

namespace fedmf::party {

class AdminService final : public v1::PartyAdmin::Service {
 public:
  AdminService(PartyAgent* agent, bool insecure) : agent_(agent), insecure_(insecure) {}

  grpc::Status Recommend(grpc::ServerContext* ctx, const v1::RecommendRequest* req,
                         v1::RecommendResponse* resp) override;
  grpc::Status Ledger(grpc::ServerContext* ctx, const v1::LedgerRequest* req,
                      v1::LedgerResponse* resp) override;

 private:
  grpc::Status CheckCaller(const grpc::ServerContext& ctx) const;
  PartyAgent* agent_;
  bool insecure_;
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_ADMIN_SERVICE_H_
