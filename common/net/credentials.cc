#include "common/net/credentials.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"

namespace fedmf::net {
namespace {

// Big enough for one chunk plus framing; matrices never travel whole.
constexpr int kMaxMessageBytes = 8 << 20;
// A TLS handshake on any network we run on takes well under a second.
constexpr int kConnectAttemptMs = 5000;

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsConfig& tls) {
  if (tls.insecure) {
    spdlog::warn("TLS DISABLED (--insecure): traffic is plaintext and peers are not authenticated");
    return grpc::InsecureServerCredentials();
  }
  auto files = pki::LoadTlsFiles(tls.cert_dir, tls.name);
  if (!files.ok()) return files.status();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = files->ca_cert_pem;
  options.pem_key_cert_pairs.push_back({files->key_pem, files->cert_pem});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsConfig& tls) {
  if (tls.insecure) {
    spdlog::warn("TLS DISABLED (--insecure): traffic is plaintext and the server is not verified");
    return grpc::InsecureChannelCredentials();
  }
  auto files = pki::LoadTlsFiles(tls.cert_dir, tls.name);
  if (!files.ok()) return files.status();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = files->ca_cert_pem;
  options.pem_private_key = files->key_pem;
  options.pem_cert_chain = files->cert_pem;
  return grpc::SslCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const TlsConfig& tls,
                                                           const std::string& server_cert_name) {
  auto creds = MakeChannelCredentials(tls);
  if (!creds.ok()) return creds.status();
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
  return grpc::CreateCustomChannel(address, *creds, args);
}

absl::StatusOr<pki::PeerIdentity> PeerIdentityOf(const grpc::ServerContext& context) {
  auto auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) {
    return absl::UnauthenticatedError("no verified client certificate");
  }
  auto pems = auth->FindPropertyValues("x509_pem_cert");
  if (pems.empty()) return absl::UnauthenticatedError("peer presented no certificate");
  return pki::IdentityFromCertificatePem(std::string(pems.front().data(), pems.front().size()));
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
