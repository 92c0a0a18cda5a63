// gRPC channel/server credentials for the federation: mutual TLS under the
// federation CA by default; plaintext only when explicitly asked for.
#ifndef FEDMF_COMMON_NET_CREDENTIALS_H_
#define FEDMF_COMMON_NET_CREDENTIALS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/pki/identity.h"
#include "common/pki/tls_files.h"

namespace fedmf::net {

// Where a daemon finds its TLS material, or that it runs without TLS.
struct TlsConfig {
  bool insecure = false;  // --insecure: plaintext, logged loudly
  std::string cert_dir;   // holds ca.crt, <name>.crt, <name>.key
  std::string name;       // this daemon's certificate name
};

// Server side: requires and verifies a client certificate from the CA.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsConfig& tls);
// Who a client expects at the other end of a channel. The peer's
// certificate must chain to the federation CA and carry exactly this name
// (subject CN) and, when `role` is set, this role (subject OU): a certificate
// of another role that happens to carry the name (a party's named "server",
// say) is refused in the handshake. An empty name checks the host dialed
// against the certificate's SANs instead (hostname verification).
struct ExpectedPeer {
  std::string name = "server";
  std::optional<pki::Role> role = pki::Role::kServer;
  // How the user sets `name` (error hints only), e.g. "--server-name".
  std::string name_option = "--peer-name";
};

// Client side: presents our certificate, verifies the peer's against the CA,
// its name and its role.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsConfig& tls, const ExpectedPeer& peer = {});
// A channel with fedmf's message limits, keepalive and reconnect timing, and
// an SSL target name override when the peer's certificate name differs
// from the host we dial.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const TlsConfig& tls,
                                                           const ExpectedPeer& peer = {});
// The same, naming only the peer's certificate name: a "server" is expected
// to hold the server role; any other name is checked by name only (the
// callers that know the role pass an ExpectedPeer).
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const TlsConfig& tls,
                                                           const std::string& peer_cert_name);

// The authenticated peer of an RPC (from its verified certificate). In
// insecure mode there is no identity: Unauthenticated.
absl::StatusOr<pki::PeerIdentity> PeerIdentityOf(const grpc::ServerContext& context);

// absl::Status <-> grpc::Status.
grpc::Status ToGrpc(const absl::Status& s);
absl::Status FromGrpc(const grpc::Status& s);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_CREDENTIALS_H_
