// gRPC's own log lines (e.g. "E1129 … ssl_transport_security.cc:1420]
// Handshake failed …") through spdlog, so a daemon's log has one format
// (text or JSON, --log-format) and a log shipper never sees a raw line.
#ifndef FEDMF_COMMON_NET_GRPC_LOGGING_H_
#define FEDMF_COMMON_NET_GRPC_LOGGING_H_

namespace fedmf::net {

// From now on gRPC logs through spdlog as "grpc: <file>:<line>: <message>":
// its errors at warning (a daemon retries, and logs the TLS cause it found
// itself: tls_diagnosis.h), the rest at debug. `quiet` (the CLI, which
// prints its own diagnosis) puts its errors at debug too.
void RouteGrpcLogsToSpdlog(bool quiet = false);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_GRPC_LOGGING_H_
