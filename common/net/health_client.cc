#include "common/net/health_client.h"

#include "absl/strings/str_cat.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace fedmf::net {

absl::StatusOr<std::string> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                        const std::string& address, const std::string& service,
                                        absl::Duration timeout) {
  auto ctx = DeadlineContext(timeout);
  // Wait through a daemon that is still starting, up to the deadline.
  ctx->set_wait_for_ready(true);
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  grpc::health::v1::HealthCheckResponse resp;
  grpc::Status s = grpc::health::v1::Health::NewStub(channel)->Check(ctx.get(), req, &resp);
  if (!s.ok()) {
    absl::Status st = FromGrpc(s);
    return absl::Status(st.code(), absl::StrCat("health check of ", address,
                                                service.empty() ? "" : " service '" + service + "'",
                                                ": ", st.message()));
  }
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(resp.status());
}

}  // namespace fedmf::net
