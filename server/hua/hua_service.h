// gRPC edge of fedmf-server for Hua S3: the HuaRecommender service device
// hosts call (the caller's identity is its certificate, role device), and
// the link the server dials to fedmf-aggregator (as itself, role server).
#ifndef FEDMF_SERVER_HUA_HUA_SERVICE_H_
#define FEDMF_SERVER_HUA_HUA_SERVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/net/credentials.h"
#include "fedmf/v1/hua.grpc.pb.h"
#include "server/hua/hua_runner.h"
#include "server/poll_limiter.h"

namespace fedmf::server {

class HuaRecommenderService final : public v1::HuaRecommender::Service {
 public:
  HuaRecommenderService(HuaRunner* runner, bool insecure) : runner_(runner), insecure_(insecure) {}

  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::HuaJobQuery* req,
                      v1::HuaJobOffer* resp) override;
  grpc::Status Register(grpc::ServerContext* ctx, const v1::HuaRegisterRequest* req,
                        v1::HuaRegisterResponse* resp) override;
  grpc::Status Poll(grpc::ServerContext* ctx, const v1::HuaPollRequest* req,
                    v1::HuaTasks* resp) override;
  grpc::Status Done(grpc::ServerContext* ctx, const v1::HuaDoneRequest* req,
                    v1::HuaAck* resp) override;
  grpc::Status FinalItems(grpc::ServerContext* ctx, const v1::HuaFinalItemsRequest* req,
                          v1::HuaFinalItems* resp) override;
  grpc::Status ReportResult(grpc::ServerContext* ctx, const v1::HuaResultReport* req,
                            v1::HuaAck* resp) override;

  // Caps concurrent long-polls (null = no cap); owned by the caller.
  void set_poll_limiter(PollLimiter* limiter) { poll_limiter_ = limiter; }

 private:
  // The host's certificate name (role device); it must equal `claimed`.
  absl::StatusOr<std::string> Caller(const grpc::ServerContext& ctx, const std::string& claimed);

  HuaRunner* runner_;
  bool insecure_;
  PollLimiter* poll_limiter_ = nullptr;
};

// Dials fedmf-aggregator with the server's own certificate; the aggregator's
// certificate must carry the name `aggregator_cert_name`.
AggregatorLinkFactory MakeGrpcAggregatorLinks(net::TlsConfig tls,
                                              std::string aggregator_cert_name = "aggregator");

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_HUA_HUA_SERVICE_H_
