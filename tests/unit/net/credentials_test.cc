// Mutual TLS with real gRPC on loopback: certificates from common/pki, a
// one-RPC Coordinator server, and clients with good, missing and foreign
// certificates.
#include "common/net/credentials.h"

#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/net/grpc_logging.h"
#include "common/net/tls_diagnosis.h"
#include "common/pki/ca.h"
#include "common/pki/tls_files.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ringbuffer_sink.h"
#include "spdlog/spdlog.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/unit/net/loopback_server.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::ReadFile;
using ::fedmf::testing::StatusIs;

namespace fedmf::net {
namespace {

using ::testing::HasSubstr;

// Echoes the caller's authenticated identity, or fails as PeerIdentityOf does.
class EchoIdentityService final : public v1::Coordinator::Service {
  grpc::Status Register(grpc::ServerContext* context, const v1::RegisterRequest*,
                        v1::RegisterResponse* response) override {
    auto id = PeerIdentityOf(*context);
    if (!id.ok()) return ToGrpc(id.status());
    response->set_server_version(id->name + "/" + pki::RoleToString(id->role));
    return grpc::Status::OK;
  }
};

struct RpcResult {
  grpc::Status status;
  std::string identity;
};

// Every RPC has a deadline so a broken handshake fails the test, not hangs it.
RpcResult CallRegister(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = v1::Coordinator::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::RegisterRequest req;
  req.set_party("party-a");
  v1::RegisterResponse resp;
  RpcResult r;
  r.status = stub->Register(&ctx, req, &resp);
  r.identity = resp.server_version();
  return r;
}

class CredentialsTest : public ::testing::Test {
 protected:
  // Key generation is cheap (P-256) but one PKI for the whole suite is enough.
  static void SetUpTestSuite() {
    root_ = new ::fedmf::testing::ScopedTempDir("fedmf_net_");
    const auto ten_years = absl::Hours(24 * 3650);
    const auto year = absl::Hours(24 * 365);
    const std::vector<std::string> sans = {"localhost", "127.0.0.1"};
    ASSERT_THAT(pki::InitCa(Dir("ca"), "test", ten_years), IsOk());
    ASSERT_TRUE(
        pki::IssueCertificate(Dir("ca"), Dir("server"), "server", pki::Role::kServer, sans, year)
            .ok());
    ASSERT_TRUE(
        pki::IssueCertificate(Dir("ca"), Dir("party"), "party-a", pki::Role::kParty, sans, year)
            .ok());
    // A party-role certificate that carries the name "server" (the CA issued
    // it by mistake, or a party asked for that name): not a server.
    ASSERT_TRUE(pki::IssueCertificate(Dir("ca"), Dir("fake-server"), "server", pki::Role::kParty,
                                      sans, year)
                    .ok());
    // A server certificate with no SAN but its name (fedmf ca issue's
    // default): valid only when dialed by its certificate name.
    ASSERT_TRUE(
        pki::IssueCertificate(Dir("ca"), Dir("bare-server"), "server", pki::Role::kServer, {}, year)
            .ok());
    // A second federation whose certificates must not be accepted.
    ASSERT_THAT(pki::InitCa(Dir("other-ca"), "other", ten_years), IsOk());
    ASSERT_TRUE(pki::IssueCertificate(Dir("other-ca"), Dir("other-party"), "party-a",
                                      pki::Role::kParty, sans, year)
                    .ok());
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  static std::string Dir(const std::string& sub) { return root_->Path(sub); }

  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }

  // Starts the echo server on an ephemeral loopback port.
  void StartServer(const TlsConfig& tls) {
    ASSERT_OK_AND_ASSIGN(auto creds, MakeServerCredentials(tls));
    testing::LoopbackServer started = testing::StartLoopbackServer(creds, &service_);
    ASSERT_NE(started.server, nullptr);
    server_ = std::move(started.server);
    address_ = started.address;
  }

  static TlsConfig ServerTls() {
    return {.insecure = false, .cert_dir = Dir("server"), .name = "server"};
  }
  static TlsConfig PartyTls() {
    return {.insecure = false, .cert_dir = Dir("party"), .name = "party-a"};
  }
  static TlsConfig InsecureTls() { return {.insecure = true, .cert_dir = "", .name = ""}; }

  std::shared_ptr<grpc::Channel> RawSslChannel(const grpc::SslCredentialsOptions& options) {
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("server");
    return grpc::CreateCustomChannel(address_, grpc::SslCredentials(options), args);
  }

  static ::fedmf::testing::ScopedTempDir* root_;
  EchoIdentityService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

::fedmf::testing::ScopedTempDir* CredentialsTest::root_ = nullptr;

TEST_F(CredentialsTest, ValidClientCertificateYieldsIdentity) {
  StartServer(ServerTls());
  ASSERT_OK_AND_ASSIGN(auto channel, MakeChannel(address_, PartyTls()));
  RpcResult r = CallRegister(channel);
  ASSERT_THAT(r.status, IsOk()) << r.status.error_code() << ": " << r.status.error_message();
  EXPECT_EQ(r.identity, "party-a/party");
}

TEST_F(CredentialsTest, DialByHostNameVerifiesSan) {
  StartServer(ServerTls());
  // No target-name override: the server certificate's SAN "localhost" must match.
  const std::string port = address_.substr(address_.rfind(':') + 1);
  ASSERT_OK_AND_ASSIGN(auto channel,
                       MakeChannel("localhost:" + port, PartyTls(), /*server_cert_name=*/""));
  RpcResult r = CallRegister(channel);
  ASSERT_THAT(r.status, IsOk()) << r.status.error_code() << ": " << r.status.error_message();
  EXPECT_EQ(r.identity, "party-a/party");
}

TEST_F(CredentialsTest, ClientRejectsServerWithUnexpectedName) {
  StartServer(ServerTls());
  ASSERT_OK_AND_ASSIGN(auto channel,
                       MakeChannel(address_, PartyTls(), /*server_cert_name=*/"not-the-server"));
  RpcResult r = CallRegister(channel);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

TEST_F(CredentialsTest, ClientRejectsServerNameWithAnotherRole) {
  StartServer({.insecure = false, .cert_dir = Dir("fake-server"), .name = "server"});
  auto channel = MakeChannel(address_, PartyTls());  // expects "server" with the server role
  ASSERT_THAT(channel, IsOk());
  RpcResult r = CallRegister(*channel);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
  EXPECT_TRUE(r.identity.empty());
  // The same certificate is accepted by a client that expects that role.
  ASSERT_OK_AND_ASSIGN(auto party_channel, MakeChannel(address_, PartyTls(),
                                                       ExpectedPeer{"server", pki::Role::kParty}));
  EXPECT_THAT(CallRegister(party_channel).status, IsOk());
}

TEST_F(CredentialsTest, ClientRejectsHostNotInTheSans) {
  StartServer(ServerTls());
  // Dialed by a name the server's certificate does not carry.
  const std::string port = address_.substr(address_.rfind(':') + 1);
  ASSERT_OK_AND_ASSIGN(auto channel,
                       MakeChannel("127.0.0.2:" + port, PartyTls(), /*peer_cert_name=*/""));
  RpcResult r = CallRegister(channel);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

// Issue 56, item 9: `fedmf health 127.0.0.1:PORT` without --peer-name, at
// a daemon whose certificate names only itself: the cause is found by one
// handshake, and the advice is to name the peer, not to reissue the
// certificate for an address.
TEST_F(CredentialsTest, DiagnosisOfADaemonDialedByAddressAdvisesItsName) {
  StartServer({.insecure = false, .cert_dir = Dir("bare-server"), .name = "server"});
  ASSERT_OK_AND_ASSIGN(auto files, pki::LoadTlsFiles(Dir("party"), "party-a"));
  const std::string cause =
      DiagnoseTls(address_, files, ExpectedPeer{"", std::nullopt}, absl::Seconds(5));
  EXPECT_THAT(cause, HasSubstr("presents the certificate of 'server' (role server), which is "
                               "not valid for '127.0.0.1'"));
  EXPECT_THAT(cause, HasSubstr("pass --peer-name server"));
  EXPECT_THAT(cause, ::testing::Not(HasSubstr("reissue")));
  // Named, it is the one meant: nothing to diagnose.
  EXPECT_EQ(
      DiagnoseTls(address_, files, ExpectedPeer{"server", pki::Role::kServer}, absl::Seconds(5)),
      "");
}

// gRPC's own lines go through spdlog (one format per daemon, JSON included).
TEST(GrpcLoggingTest, GrpcLinesArriveInSpdlogFormatted) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  spdlog::set_pattern("[%l] %v");
  RouteGrpcLogsToSpdlog();
  grpc_init();  // gRPC drops lines logged before it is initialized (verbosity unset)
  gpr_log("src/core/tsi/ssl_transport_security.cc", 1420, GPR_LOG_SEVERITY_ERROR,
          "Handshake failed with fatal error %s", "SSL_ERROR_SSL");
  const std::vector<std::string> lines = sink->last_formatted(4);
  grpc_shutdown();
  spdlog::set_default_logger(previous);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines.back(), HasSubstr("[warning] grpc: ssl_transport_security.cc:1420: Handshake "
                                      "failed with fatal error SSL_ERROR_SSL"));
}

TEST_F(CredentialsTest, ClientWithoutCertificateIsRefused) {
  StartServer(ServerTls());
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadFile(Dir("party") + "/ca.crt");
  RpcResult r = CallRegister(RawSslChannel(options));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
  EXPECT_TRUE(r.identity.empty());
}

TEST_F(CredentialsTest, ClientCertificateFromAnotherCaIsRefused) {
  StartServer(ServerTls());
  // The client trusts the real CA (so it accepts the server) but presents a
  // certificate with the same name issued by a foreign CA.
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadFile(Dir("party") + "/ca.crt");
  options.pem_cert_chain = ReadFile(Dir("other-party") + "/party-a.crt");
  options.pem_private_key = ReadFile(Dir("other-party") + "/party-a.key");
  RpcResult r = CallRegister(RawSslChannel(options));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
  EXPECT_TRUE(r.identity.empty());
}

TEST_F(CredentialsTest, ClientOfAnotherFederationDoesNotTrustServer) {
  StartServer(ServerTls());
  auto channel =
      MakeChannel(address_, {.insecure = false, .cert_dir = Dir("other-party"), .name = "party-a"});
  ASSERT_THAT(channel, IsOk());
  RpcResult r = CallRegister(*channel);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

TEST_F(CredentialsTest, InsecureClientAgainstTlsServerFails) {
  StartServer(ServerTls());
  ASSERT_OK_AND_ASSIGN(auto channel, MakeChannel(address_, InsecureTls()));
  RpcResult r = CallRegister(channel);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_TRUE(r.identity.empty());
}

TEST_F(CredentialsTest, InsecureModeWorksButHasNoIdentity) {
  StartServer(InsecureTls());
  ASSERT_OK_AND_ASSIGN(auto channel, MakeChannel(address_, InsecureTls()));
  RpcResult r = CallRegister(channel);
  // The RPC itself reaches the handler; PeerIdentityOf refuses to name a peer.
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << r.status.error_message();
  EXPECT_THAT(r.status.error_message(), HasSubstr("certificate"));
}

TEST_F(CredentialsTest, MissingTlsFilesFailAtStartup) {
  auto server =
      MakeServerCredentials({.insecure = false, .cert_dir = Dir("party"), .name = "server"});
  EXPECT_EQ(server.status().code(), absl::StatusCode::kNotFound) << server.status();
  auto client =
      MakeChannelCredentials({.insecure = false, .cert_dir = Dir("nowhere"), .name = "party-a"});
  EXPECT_EQ(client.status().code(), absl::StatusCode::kNotFound) << client.status();
  auto channel =
      MakeChannel("127.0.0.1:1", {.insecure = false, .cert_dir = Dir("nowhere"), .name = "x"});
  EXPECT_THAT(channel, StatusIs(absl::StatusCode::kNotFound));
}

TEST(StatusConversionTest, RoundTripsCodeAndMessage) {
  EXPECT_THAT(ToGrpc(absl::OkStatus()), IsOk());
  EXPECT_THAT(FromGrpc(grpc::Status::OK), IsOk());
  for (absl::Status s :
       {absl::InvalidArgumentError("field 'x': bad"), absl::FailedPreconditionError("stale round"),
        absl::UnauthenticatedError("who?"), absl::DataLossError("checksum"),
        absl::PermissionDeniedError("not on roster"), absl::DeadlineExceededError("late")}) {
    grpc::Status g = ToGrpc(s);
    EXPECT_EQ(static_cast<int>(g.error_code()), static_cast<int>(s.code()));
    EXPECT_EQ(g.error_message(), std::string(s.message()));
    EXPECT_EQ(FromGrpc(g), s);
  }
  EXPECT_EQ(ToGrpc(absl::PermissionDeniedError("x")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")).code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace fedmf::net
