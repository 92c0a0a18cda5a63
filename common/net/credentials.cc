#include "common/net/credentials.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/log/log.h"
#include "common/pki/identity_cache.h"

namespace fedmf::net {
namespace {

// Big enough for one chunk plus framing; matrices never travel whole.
constexpr int kMaxMessageBytes = 8 << 20;
// A TLS handshake on any network we run on takes well under a second.
constexpr int kConnectAttemptMs = 5000;
// Distinct peer certificates whose identity a process keeps
// (pki::IdentityCache): hosts and operators of one federation, with room.
constexpr size_t kMaxCachedIdentities = 1024;

// Runs after gRPC verified the peer's chain against the federation CA: checks
// the name and role the client expects (ExpectedPeer). Synchronous.
class PeerVerifier : public grpc::experimental::ExternalCertificateVerifier {
 public:
  explicit PeerVerifier(ExpectedPeer peer) : peer_(std::move(peer)) {}

  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/, grpc::Status* sync_status) override {
    *sync_status = Check(*request);
    if (!sync_status->ok()) spdlog::warn("refused the peer: {}", sync_status->error_message());
    return true;
  }
  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {}

 private:
  grpc::Status Check(const grpc::experimental::TlsCustomVerificationCheckRequest& r) const {
    const std::string target(r.target_name().data(), r.target_name().size());
    if (peer_.name.empty()) {  // hostname verification against the SANs
      std::string host = target;
      if (const size_t colon = host.rfind(':');
          colon != std::string::npos && host.find(':') == colon) {
        host.resize(colon);  // host:port (an IPv6 literal keeps its colons)
      }
      auto names = r.dns_names();
      const auto ips = r.ip_names();
      names.insert(names.end(), ips.begin(), ips.end());
      const bool match = std::any_of(names.begin(), names.end(), [&](const grpc::string_ref& n) {
        return std::string(n.data(), n.size()) == host;
      });
      if (!match) {
        return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                            absl::StrCat("the peer's certificate does not name the host dialed '",
                                         host, "' (its SANs)"));
      }
    }
    auto id =
        pki::IdentityFromCertificatePem(std::string(r.peer_cert().data(), r.peer_cert().size()));
    if (!id.ok()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          absl::StrCat("the peer's certificate: ", id.status().message()));
    }
    if (!peer_.name.empty() && id->name != peer_.name) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          absl::StrCat("peer name mismatch: the certificate is '", id->name,
                                       "', expected '", peer_.name, "'"));
    }
    if (peer_.role.has_value() && id->role != *peer_.role) {
      return grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("peer role mismatch: '", id->name, "' holds a ", pki::RoleToString(id->role),
                       " certificate, expected ", pki::RoleToString(*peer_.role)));
    }
    return grpc::Status::OK;
  }

  const ExpectedPeer peer_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsConfig& tls) {
  if (tls.insecure) {
    spdlog::warn("TLS DISABLED (--insecure): traffic is plaintext and peers are not authenticated");
    return grpc::InsecureServerCredentials();
  }
  ASSIGN_OR_RETURN(auto files, pki::LoadTlsFiles(tls.cert_dir, tls.name));
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = files.ca_cert_pem;
  options.pem_key_cert_pairs.push_back({files.key_pem, files.cert_pem});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsConfig& tls, const ExpectedPeer& peer) {
  if (tls.insecure) {
    spdlog::warn("TLS DISABLED (--insecure): traffic is plaintext and the server is not verified");
    return grpc::InsecureChannelCredentials();
  }
  ASSIGN_OR_RETURN(auto files, pki::LoadTlsFiles(tls.cert_dir, tls.name));
  namespace gx = grpc::experimental;
  gx::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(std::make_shared<gx::StaticDataCertificateProvider>(
      files.ca_cert_pem, std::vector<gx::IdentityKeyCertPair>{{files.key_pem, files.cert_pem}}));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  // The chain is verified against ca.crt by gRPC; the name and role by
  // PeerVerifier (which replaces gRPC's hostname check).
  options.set_verify_server_certs(true);
  options.set_check_call_host(false);
  options.set_certificate_verifier(gx::ExternalCertificateVerifier::Create<PeerVerifier>(peer));
  auto creds = gx::TlsCredentials(options);
  if (creds == nullptr) return absl::InternalError("could not create the TLS channel credentials");
  return creds;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const TlsConfig& tls,
                                                           const std::string& peer_cert_name) {
  ExpectedPeer peer{peer_cert_name, std::nullopt};
  if (peer_cert_name == "server") peer.role = pki::Role::kServer;
  return MakeChannel(address, tls, peer);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const TlsConfig& tls,
                                                           const ExpectedPeer& peer) {
  const std::string& server_cert_name = peer.name;
  ASSIGN_OR_RETURN(auto creds, MakeChannelCredentials(tls, peer));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Reconnect quickly after a peer restart (the party's own loop adds backoff).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // The deadline of one connection attempt (TCP, TLS, HTTP/2 SETTINGS), 20 s
  // by default: an attempt stuck on a peer that accepted but does not answer
  // yet would hold the reconnection that long after the server is up.
  // (gRPC core reads this argument as the minimum connect timeout of a
  // subchannel, despite its name.)
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kConnectAttemptMs);
  if (!tls.insecure && !server_cert_name.empty()) {
    args.SetSslTargetNameOverride(server_cert_name);
  }
  return grpc::CreateCustomChannel(address, creds, args);
}

absl::StatusOr<pki::PeerIdentity> PeerIdentityOf(const grpc::ServerContext& context) {
  auto auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) {
    return absl::UnauthenticatedError("no verified client certificate");
  }
  auto pems = auth->FindPropertyValues("x509_pem_cert");
  if (pems.empty()) return absl::UnauthenticatedError("peer presented no certificate");
  // One memo per process, never destroyed (RPCs may run during exit).
  static auto* const identities = new pki::IdentityCache(kMaxCachedIdentities);
  return identities->Lookup(absl::string_view(pems.front().data(), pems.front().size()));
}

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace fedmf::net
