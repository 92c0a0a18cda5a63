// gRPC channel/server credentials for the federation: mutual TLS under the
// federation CA by default; plaintext only when explicitly asked for.
#ifndef FEDMF_COMMON_NET_CREDENTIALS_H_
#define FEDMF_COMMON_NET_CREDENTIALS_H_

#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "common/pki/identity.h"
#include "common/pki/tls_files.h"

namespace fedmf::net {

// Where a daemon finds its TLS material, or that it runs without TLS.
struct TlsConfig {
  bool insecure = false;     // --insecure: plaintext, logged loudly
  std::string cert_dir;      // holds ca.crt, <name>.crt, <name>.key
  std::string name;          // this daemon's certificate name
};

// Server side: requires and verifies a client certificate from the CA.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsConfig& tls);
// Client side: presents our certificate, verifies the server's against the CA.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsConfig& tls);
// A channel with fedmf's message limits, keepalive and reconnect timing, and
// an SSL target name override when the server's certificate name differs
// from the host we dial.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const std::string& address, const TlsConfig& tls,
    const std::string& server_cert_name = "server");

// The authenticated peer of an RPC (from its verified certificate). In
// insecure mode there is no identity: Unauthenticated.
absl::StatusOr<pki::PeerIdentity> PeerIdentityOf(const grpc::ServerContext& context);

// absl::Status <-> grpc::Status.
grpc::Status ToGrpc(const absl::Status& s);
absl::Status FromGrpc(const grpc::Status& s);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_CREDENTIALS_H_
