// Client side of the standard gRPC health checking protocol (grpc.health.v1),
// which every fedmf daemon serves (grpc::EnableDefaultHealthCheckService).
// Used by `fedmf health` (container health checks) and the tests.
#ifndef FEDMF_COMMON_NET_HEALTH_CLIENT_H_
#define FEDMF_COMMON_NET_HEALTH_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fedmf::net {

// Health/Check for `service` ("" = the whole server). Returns the serving
// status name ("SERVING", "NOT_SERVING", ...); a transport or TLS failure,
// or an unknown service (NOT_FOUND), is an error naming the address.
absl::StatusOr<std::string> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                        const std::string& address, const std::string& service,
                                        absl::Duration timeout);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_HEALTH_CLIENT_H_
