// DiagnoseTls in process (common/net/tls_diagnosis.h): a gRPC server on a
// loopback port with certificates made by common/pki in a temporary
// directory, and the one sentence DiagnoseTls gives for each way the
// connection can be wrong (or "" when it is right).
#include "common/net/tls_diagnosis.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "common/net/credentials.h"
#include "common/pki/ca.h"
#include "common/pki/tls_files.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/unit/net/loopback_server.h"

namespace fedmf::net {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::ReadFile;
using ::fedmf::testing::ScopedTempDir;
using ::fedmf::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr absl::Duration kTimeout = absl::Seconds(10);

// Re-signs dir/name.crt with the CA in ca_dir so that it expired yesterday:
// common/pki issues only certificates valid from now on.
void BackdateCertificate(const std::string& ca_dir, const std::string& dir,
                         const std::string& name) {
  const std::string cert_pem = ReadFile(dir + "/" + name + ".crt");
  const std::string key_pem = ReadFile(ca_dir + "/ca.key");
  BIO* cb = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  BIO_free(cb);
  BIO* kb = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* ca_key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
  BIO_free(kb);
  ASSERT_NE(cert, nullptr);
  ASSERT_NE(ca_key, nullptr);
  ASSERT_NE(X509_gmtime_adj(X509_getm_notBefore(cert), -2 * 24 * 3600), nullptr);
  ASSERT_NE(X509_gmtime_adj(X509_getm_notAfter(cert), -24 * 3600), nullptr);
  ASSERT_GT(X509_sign(cert, ca_key, EVP_sha256()), 0);
  BIO* out = BIO_new(BIO_s_mem());
  ASSERT_EQ(PEM_write_bio_X509(out, cert), 1);
  char* data = nullptr;
  const long n = BIO_get_mem_data(out, &data);  // NOLINT(runtime/int): OpenSSL's type
  std::ofstream(dir + "/" + name + ".crt", std::ios::trunc) << std::string(data, n);
  BIO_free(out);
  EVP_PKEY_free(ca_key);
  X509_free(cert);
}

// A TCP socket bound to an ephemeral 127.0.0.1 port (-1 on failure);
// *address is "127.0.0.1:PORT".
int BindLoopback(std::string* address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  return fd;
}

class TlsDiagnosisTest : public ::testing::Test {
 protected:
  // One PKI for the suite: our federation's CA, a server, a party, a party
  // certificate named "server", a server whose certificate expired, and a
  // second federation's party.
  static void SetUpTestSuite() {
    root_ = new ScopedTempDir("fedmf_tls_diagnosis_");
    const absl::Duration year = absl::Hours(24 * 365);
    const std::vector<std::string> sans = {"localhost", "127.0.0.1"};
    ASSERT_THAT(pki::InitCa(Dir("ca"), "test", 10 * year), IsOk());
    ASSERT_THAT(
        pki::IssueCertificate(Dir("ca"), Dir("server"), "server", pki::Role::kServer, sans, year),
        IsOk());
    ASSERT_THAT(
        pki::IssueCertificate(Dir("ca"), Dir("party"), "party-a", pki::Role::kParty, sans, year),
        IsOk());
    ASSERT_THAT(pki::IssueCertificate(Dir("ca"), Dir("fake-server"), "server", pki::Role::kParty,
                                      sans, year),
                IsOk());
    ASSERT_THAT(pki::IssueCertificate(Dir("ca"), Dir("expired-server"), "server",
                                      pki::Role::kServer, sans, year),
                IsOk());
    BackdateCertificate(Dir("ca"), Dir("expired-server"), "server");
    ASSERT_THAT(pki::InitCa(Dir("other-ca"), "other", 10 * year), IsOk());
    ASSERT_THAT(pki::IssueCertificate(Dir("other-ca"), Dir("other-party"), "party-a",
                                      pki::Role::kParty, sans, year),
                IsOk());
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  static std::string Dir(const std::string& sub) { return root_->Path(sub); }

  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }

  // A gRPC server with fedmf's server credentials on an ephemeral port.
  void StartServer(const TlsConfig& tls) {
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<grpc::ServerCredentials> creds,
                         MakeServerCredentials(tls));
    Start(creds);
  }
  void StartServer(const std::string& cert_dir) {
    StartServer(TlsConfig{.insecure = false, .cert_dir = Dir(cert_dir), .name = "server"});
  }
  // As MakeServerCredentials, without its check of our files: a daemon
  // started before its certificate expired keeps presenting it.
  void StartServerUnchecked(const std::string& cert_dir) {
    grpc::SslServerCredentialsOptions options(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    options.pem_root_certs = ReadFile(Dir(cert_dir) + "/ca.crt");
    options.pem_key_cert_pairs.push_back(
        {ReadFile(Dir(cert_dir) + "/server.key"), ReadFile(Dir(cert_dir) + "/server.crt")});
    Start(grpc::SslServerCredentials(options));
  }
  void Start(const std::shared_ptr<grpc::ServerCredentials>& creds) {
    testing::LoopbackServer started = testing::StartLoopbackServer(creds, &service_);
    ASSERT_NE(started.server, nullptr);
    server_ = std::move(started.server);
    address_ = started.address;
  }
  static pki::TlsFiles Files(const std::string& dir, const std::string& name) {
    absl::StatusOr<pki::TlsFiles> files = pki::LoadTlsFiles(Dir(dir), name);
    EXPECT_THAT(files, IsOk());
    return files.ok() ? *files : pki::TlsFiles{};
  }
  static pki::TlsFiles Party() { return Files("party", "party-a"); }
  static ExpectedPeer Server() { return ExpectedPeer{"server", pki::Role::kServer}; }

  static ScopedTempDir* root_;
  v1::Coordinator::Service service_;  // every method unimplemented: TLS is what is tested
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

ScopedTempDir* TlsDiagnosisTest::root_ = nullptr;

TEST_F(TlsDiagnosisTest, AGoodPairHasNothingToDiagnose) {
  StartServer("server");
  EXPECT_EQ(DiagnoseTls(address_, Party(), Server(), kTimeout), "");
  // Dialed by an address its certificate carries, without naming it: fine too.
  EXPECT_EQ(DiagnoseTls(address_, Party(), ExpectedPeer{"", pki::Role::kServer}, kTimeout), "");
}

TEST_F(TlsDiagnosisTest, ServerOfAnotherFederationDoesNotVerifyAgainstOurCa) {
  StartServer("server");
  pki::TlsFiles ours = Party();
  ours.ca_cert_pem = ReadFile(Dir("other-ca") + "/ca.crt");  // we trust another CA
  EXPECT_THAT(DiagnoseTls(address_, ours, Server(), kTimeout),
              AllOf(StartsWith(address_ + "'s certificate does not verify against this client's "
                                          "CA (ca.crt in --cert-dir): "),
                    HasSubstr("unable to get local issuer certificate")));
}

TEST_F(TlsDiagnosisTest, ClientOfAnotherFederationIsRefusedByTheServer) {
  StartServer("server");
  // Our certificate is from another federation's CA; we trust the server's
  // CA, so the server's certificate verifies and only the server can object.
  // gRPC 1.51's server refuses us under TLS 1.3 by closing the connection
  // after the handshake, without an alert. The verdict wait is the whole
  // timeout here, so that a loaded machine cannot make the test miss it.
  pki::TlsFiles ours = Files("other-party", "party-a");
  ours.ca_cert_pem = ReadFile(Dir("ca") + "/ca.crt");
  EXPECT_EQ(DiagnoseTls(address_, ours, Server(), kTimeout, /*verdict_wait=*/kTimeout),
            address_ +
                " refused this client's certificate (it closed the connection after the TLS "
                "handshake, without an alert): most likely the certificate is not signed by "
                "that federation's CA (it comes from another `fedmf ca init`); have that "
                "federation's `fedmf ca` issue this client's certificate (`fedmf ca issue`, or "
                "`fedmf ca sign` of a `fedmf ca request`)");
  // With our own federation's certificate the same server accepts us.
  EXPECT_EQ(DiagnoseTls(address_, Party(), Server(), kTimeout, /*verdict_wait=*/kTimeout), "");
}

TEST_F(TlsDiagnosisTest, AServerSilentAfterTheHandshakeCountsAsAccepting) {
  // A TLS server (OpenSSL alone, the federation's server certificate) that
  // completes the handshake and then sends nothing until the client hangs
  // up: the verdict wait runs out, which must read as "accepted", never as
  // a refusal.
  std::string address;
  const int listener = BindLoopback(&address);
  ASSERT_GE(listener, 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(
      SSL_CTX_use_certificate_file(ctx, (Dir("server") + "/server.crt").c_str(), SSL_FILETYPE_PEM),
      1);
  ASSERT_EQ(
      SSL_CTX_use_PrivateKey_file(ctx, (Dir("server") + "/server.key").c_str(), SSL_FILETYPE_PEM),
      1);
  bool handshake_done = false;
  std::thread silent([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
      handshake_done = true;
      char byte = 0;
      SSL_read(ssl, &byte, 1);  // returns when the client closes
    }
    SSL_free(ssl);
    ::close(fd);
  });
  EXPECT_EQ(DiagnoseTls(address, Party(), Server(), kTimeout,
                        /*verdict_wait=*/absl::Milliseconds(200)),
            "");
  ::shutdown(listener, SHUT_RDWR);  // wakes accept() if DiagnoseTls never connected
  silent.join();
  EXPECT_TRUE(handshake_done);
  SSL_CTX_free(ctx);
  ::close(listener);
}

TEST_F(TlsDiagnosisTest, OwnFilesThatDoNotLoadAreTheCause) {
  StartServer("server");
  pki::TlsFiles ours = Party();
  ours.key_pem = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  EXPECT_THAT(DiagnoseTls(address_, ours, Server(), kTimeout),
              StartsWith("this client's own certificate or key does not load: "));
}

TEST_F(TlsDiagnosisTest, ExpiredServerCertificateIsNamedAsExpired) {
  // fedmf's own server credentials refuse to start with it.
  EXPECT_THAT(MakeServerCredentials(TlsConfig{
                  .insecure = false, .cert_dir = Dir("expired-server"), .name = "server"}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("expired")));
  StartServerUnchecked("expired-server");
  EXPECT_THAT(DiagnoseTls(address_, Party(), Server(), kTimeout),
              AllOf(StartsWith(address_ + "'s certificate does not verify against this client's "
                                          "CA"),
                    HasSubstr("expired")));
}

TEST_F(TlsDiagnosisTest, WrongNameAndWrongRoleAreNamedWithTheFix) {
  StartServer("server");
  EXPECT_EQ(DiagnoseTls(address_, Party(),
                        ExpectedPeer{"coordinator", pki::Role::kServer, "--server-name"}, kTimeout),
            address_ +
                " presents the certificate of 'server' (role server), not of 'coordinator': "
                "pass --server-name server if that daemon is the one meant");
  server_->Shutdown(std::chrono::system_clock::now());
  StartServer("fake-server");  // a party certificate named "server"
  EXPECT_EQ(DiagnoseTls(address_, Party(), Server(), kTimeout),
            address_ +
                " presents a certificate of role party for 'server'; this client expects role "
                "server");
}

TEST_F(TlsDiagnosisTest, AddressesWithoutATlsDaemon) {
  EXPECT_EQ(DiagnoseTls("localhost", Party(), Server(), kTimeout), "'localhost' is not HOST:PORT");
  // A port nothing listens on: bound and closed again by this test.
  std::string closed;
  const int fd = BindLoopback(&closed);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(DiagnoseTls(closed, Party(), Server(), kTimeout),
            "nothing listens on " + closed + " (connection refused)");
  // A plaintext daemon (--insecure) answers a ClientHello with no TLS.
  StartServer(TlsConfig{.insecure = true, .cert_dir = "", .name = ""});
  EXPECT_THAT(DiagnoseTls(address_, Party(), Server(), kTimeout),
              ::testing::AnyOf(HasSubstr("(a plaintext daemon started with --insecure?)"),
                               HasSubstr("(is it a fedmf daemon's TLS port?)")));
}

TEST_F(TlsDiagnosisTest, RpcFailuresAreDiagnosedOnlyWhenTheConnectionFailed) {
  StartServerUnchecked("expired-server");
  const TlsConfig party{.insecure = false, .cert_dir = Dir("party"), .name = "party-a"};
  EXPECT_EQ(
      DiagnoseRpcFailure(absl::InvalidArgumentError("x"), address_, party, Server(), kTimeout), "");
  EXPECT_EQ(DiagnoseRpcFailure(absl::UnavailableError("x"), address_,
                               TlsConfig{.insecure = true, .cert_dir = "", .name = ""}, Server(),
                               kTimeout),
            "");
  EXPECT_THAT(DiagnoseRpcFailure(absl::UnavailableError("x"), address_, party, Server(), kTimeout),
              HasSubstr("expired"));
  EXPECT_THAT(
      DiagnoseRpcFailure(absl::DeadlineExceededError("x"), address_, party, Server(), kTimeout),
      HasSubstr("expired"));
  // Our own files missing: that is the cause.
  const TlsConfig missing{.insecure = false, .cert_dir = Dir("nowhere"), .name = "party-a"};
  EXPECT_THAT(
      DiagnoseRpcFailure(absl::UnavailableError("x"), address_, missing, Server(), kTimeout),
      HasSubstr(Dir("nowhere")));

  // A retry loop hears each cause once.
  TlsCauseOnce once(address_, party, Server(), kTimeout);
  EXPECT_THAT(once.NewCause(absl::UnavailableError("x")), HasSubstr("expired"));
  EXPECT_EQ(once.NewCause(absl::UnavailableError("x")), "");
  EXPECT_EQ(once.NewCause(absl::OkStatus()), "");
  EXPECT_THAT(once.NewCause(absl::UnavailableError("x")), HasSubstr("expired"));
}

}  // namespace
}  // namespace fedmf::net
