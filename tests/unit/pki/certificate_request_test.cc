// fedmf ca request / ca sign: the partner's key never leaves its directory,
// and the operator signs only the request it means to sign.
#include "common/pki/certificate_request.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "common/pki/ca.h"
#include "common/pki/identity.h"
#include "common/pki/tls_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fedmf::pki::csr_test {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::ReadFile;
using ::fedmf::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Duration kYear = absl::Hours(24 * 365);

template <auto FreeFn>
struct Free {
  template <typename T>
  void operator()(T* p) const {
    FreeFn(p);
  }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Free<EVP_PKEY_free>>;
using ReqPtr = std::unique_ptr<X509_REQ, Free<X509_REQ_free>>;
using BioPtr = std::unique_ptr<BIO, Free<BIO_free_all>>;
using CertPtr = std::unique_ptr<X509, Free<X509_free>>;

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

// A request built by hand, as another tool (or an attacker) might make it.
struct HandMadeRequest {
  explicit HandMadeRequest(EVP_PKEY* k) : key(k) {}
  HandMadeRequest&& SignedBy(EVP_PKEY* k) && {
    signer = k;
    return std::move(*this);
  }
  HandMadeRequest&& WithSubject(std::vector<std::pair<std::string, std::string>> s) && {
    subject = std::move(s);
    return std::move(*this);
  }
  HandMadeRequest&& WithExtension(int nid, std::string value) && {
    extensions.emplace_back(nid, std::move(value));
    return std::move(*this);
  }
  HandMadeRequest&& WithDigest(const EVP_MD* md) && {
    digest = md;
    return std::move(*this);
  }

  EVP_PKEY* key = nullptr;     // the request's public key
  EVP_PKEY* signer = nullptr;  // signs it (default: key)
  std::vector<std::pair<std::string, std::string>> subject = {{"CN", "acme"}, {"OU", "party"}};
  std::vector<std::pair<int, std::string>> extensions;  // nid, OpenSSL config value
  const EVP_MD* digest = EVP_sha256();
};

std::string Pem(const HandMadeRequest& r) {
  ReqPtr req(X509_REQ_new());
  X509_REQ_set_version(req.get(), X509_REQ_VERSION_1);
  X509_REQ_set_pubkey(req.get(), r.key);
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  for (const auto& [field, value] : r.subject) {
    X509_NAME_add_entry_by_txt(name, field.c_str(), MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(value.data()),
                               static_cast<int>(value.size()), -1, 0);
  }
  if (!r.extensions.empty()) {
    STACK_OF(X509_EXTENSION)* exts = sk_X509_EXTENSION_new_null();
    for (const auto& [nid, value] : r.extensions) {
      sk_X509_EXTENSION_push(exts, X509V3_EXT_conf_nid(nullptr, nullptr, nid, value.c_str()));
    }
    X509_REQ_add_extensions(req.get(), exts);
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  }
  X509_REQ_sign(req.get(), r.signer != nullptr ? r.signer : r.key, r.digest);
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_REQ(bio.get(), req.get());
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

KeyPtr P256() { return KeyPtr(EVP_EC_gen("P-256")); }

class CertificateRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path();
    ca_dir_ = root_ + "/ca";
    partner_dir_ = root_ + "/partner";
    signed_dir_ = root_ + "/signed";
    ASSERT_THAT(InitCa(ca_dir_, "testfed", 10 * kYear), IsOk());
  }

  absl::Status CheckHandMade(const HandMadeRequest& r, std::vector<std::string> sans = {}) {
    return CheckCertificateRequest(Pem(r), "acme.csr", {"acme", Role::kParty, std::move(sans), ""})
        .status();
  }

  ::fedmf::testing::ScopedTempDir tmp_{"fedmf_csr_test."};
  std::string root_, ca_dir_, partner_dir_, signed_dir_;
};

TEST_F(CertificateRequestTest, PartnerKeepsItsKeyAndGetsAWorkingCertificate) {
  auto made_or = CreateCertificateRequest(partner_dir_, "acme", Role::kParty, {});
  ASSERT_THAT(made_or, IsOk());
  CertificateRequestInfo made = *std::move(made_or);
  EXPECT_EQ(made.name, "acme");
  EXPECT_THAT(made.sans, ElementsAre("DNS:acme"));
  EXPECT_THAT(made.key_fingerprint, ::testing::MatchesRegex("sha256:[0-9a-f]{64}"));
  EXPECT_EQ(Files(partner_dir_), (std::set<std::string>{"acme.csr", "acme.key"}));
  EXPECT_EQ(std::filesystem::status(partner_dir_ + "/acme.key").permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string key_before = ReadFile(partner_dir_ + "/acme.key");

  auto signed_info_or =
      SignCertificateRequest(ca_dir_, partner_dir_ + "/acme.csr", signed_dir_,
                             {"acme", Role::kParty, {}, made.key_fingerprint}, kYear);
  ASSERT_THAT(signed_info_or, IsOk());
  CertificateRequestInfo signed_info = *std::move(signed_info_or);
  EXPECT_EQ(signed_info.key_fingerprint, made.key_fingerprint);
  // Only public material comes back: no key in the operator's output.
  EXPECT_EQ(Files(signed_dir_), (std::set<std::string>{"acme.crt", "ca.crt"}));

  std::filesystem::copy_file(signed_dir_ + "/acme.crt", partner_dir_ + "/acme.crt");
  std::filesystem::copy_file(signed_dir_ + "/ca.crt", partner_dir_ + "/ca.crt");
  auto files_or = LoadTlsFiles(partner_dir_, "acme");
  ASSERT_THAT(files_or, IsOk());
  TlsFiles files = *std::move(files_or);
  EXPECT_EQ(files.key_pem, key_before);
  auto id_or = IdentityFromCertificatePem(files.cert_pem);
  ASSERT_THAT(id_or, IsOk());
  PeerIdentity id = *std::move(id_or);
  EXPECT_EQ(id, (PeerIdentity{"acme", Role::kParty}));
  // The certificate is a leaf like `ca issue` makes: CA:FALSE.
  BioPtr bio(BIO_new_mem_buf(files.cert_pem.data(), static_cast<int>(files.cert_pem.size())));
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(X509_check_ca(cert.get()), 0);
}

TEST_F(CertificateRequestTest, SignerChoosesTheSansAndRefusesExtraOnes) {
  auto made_or = CreateCertificateRequest(partner_dir_, "server", Role::kServer,
                                          {"fedmf.example.org", "10.0.0.7"});
  ASSERT_THAT(made_or, IsOk());
  CertificateRequestInfo made = *std::move(made_or);
  EXPECT_THAT(made.sans, ElementsAre("DNS:server", "DNS:fedmf.example.org", "IP:10.0.0.7"));
  const std::string csr = partner_dir_ + "/server.csr";
  EXPECT_THAT(SignCertificateRequest(ca_dir_, csr, signed_dir_,
                                     {"server", Role::kServer, {"fedmf.example.org"}, ""}, kYear),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("IP:10.0.0.7"), HasSubstr("--san"))));
  EXPECT_FALSE(std::filesystem::exists(signed_dir_ + "/server.crt"));
  EXPECT_THAT(SignCertificateRequest(
                  ca_dir_, csr, signed_dir_,
                  {"server", Role::kServer, {"fedmf.example.org", "10.0.0.7"}, ""}, kYear),
              IsOk());
  // Signing again refuses to overwrite.
  EXPECT_THAT(SignCertificateRequest(
                  ca_dir_, csr, signed_dir_,
                  {"server", Role::kServer, {"fedmf.example.org", "10.0.0.7"}, ""}, kYear),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST_F(CertificateRequestTest, RefusesAnotherNameOrRole) {
  ASSERT_THAT(CreateCertificateRequest(partner_dir_, "acme", Role::kParty, {}), IsOk());
  const std::string csr = partner_dir_ + "/acme.csr";
  EXPECT_THAT(
      SignCertificateRequest(ca_dir_, csr, signed_dir_, {"bank-a", Role::kParty, {}, ""}, kYear),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("asks for 'acme' (role party)"), HasSubstr("'bank-a' (role party)"),
                     HasSubstr("fedmf ca request --name bank-a --role party"))));
  EXPECT_THAT(
      SignCertificateRequest(ca_dir_, csr, signed_dir_, {"acme", Role::kOperator, {}, ""}, kYear),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("role operator")));
  EXPECT_FALSE(std::filesystem::exists(signed_dir_ + "/acme.crt"));
  EXPECT_FALSE(std::filesystem::exists(signed_dir_ + "/bank-a.crt"));
}

TEST_F(CertificateRequestTest, RefusesAnotherKeyThanTheOneReadOut) {
  auto made_or = CreateCertificateRequest(partner_dir_, "acme", Role::kParty, {});
  ASSERT_THAT(made_or, IsOk());
  CertificateRequestInfo made = *std::move(made_or);
  std::string other = made.key_fingerprint;
  other.back() = other.back() == '0' ? '1' : '0';
  EXPECT_THAT(SignCertificateRequest(ca_dir_, partner_dir_ + "/acme.csr", signed_dir_,
                                     {"acme", Role::kParty, {}, other}, kYear),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fingerprint")));
}

TEST_F(CertificateRequestTest, HandMadeRequestLikeOursIsAccepted) {
  KeyPtr key = P256();
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get())), IsOk());
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get())
                                .WithExtension(NID_subject_alt_name, "DNS:acme")
                                .WithExtension(NID_basic_constraints, "CA:FALSE")),
              IsOk());
}

TEST_F(CertificateRequestTest, RefusesOtherKeyTypes) {
  KeyPtr rsa(EVP_RSA_gen(2048));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(rsa.get())),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("RSA"), HasSubstr("not ECDSA P-256"))));
  KeyPtr p384(EVP_EC_gen("P-384"));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(p384.get())),
              StatusIs(absl::StatusCode::kInvalidArgument, AllOf(HasSubstr("secp384r1"))));
  KeyPtr ed(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(ed.get()).WithDigest(nullptr)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not ECDSA P-256")));
}

TEST_F(CertificateRequestTest, RefusesACaRequestAndOtherExtensions) {
  KeyPtr key = P256();
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithExtension(NID_basic_constraints,
                                                                     "critical,CA:TRUE")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("asks to be a certificate authority")));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithExtension(NID_key_usage, "keyCertSign")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("extension keyUsage")));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithExtension(NID_subject_alt_name,
                                                                     "DNS:acme,DNS:server")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DNS:server")));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithExtension(NID_subject_alt_name,
                                                                     "email:x@example.org")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("neither a DNS name")));
}

TEST_F(CertificateRequestTest, RefusesOtherSubjects) {
  KeyPtr key = P256();
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithSubject(
                  {{"CN", "acme"}, {"OU", "party"}, {"O", "Acme Corp"}})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("subject has a O entry")));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithSubject(
                  {{"CN", "acme"}, {"CN", "server"}, {"OU", "party"}})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("2 CN")));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithSubject({{"CN", "acme"}})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("0 OU")));
  // What the request says reaches the operator's terminal escaped.
  const absl::Status escaped = CheckHandMade(
      HandMadeRequest(key.get()).WithSubject({{"CN", "ac\x1b[2Jme"}, {"OU", "party"}}));
  EXPECT_THAT(escaped, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ac\\x1b[2Jme")));
  EXPECT_EQ(std::string(escaped.message()).find('\x1b'), std::string::npos);
}

TEST_F(CertificateRequestTest, RefusesARequestNotSignedByItsKey) {
  KeyPtr key = P256();
  KeyPtr other = P256();
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).SignedBy(other.get())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not verify")));
  EXPECT_THAT(CheckHandMade(HandMadeRequest(key.get()).WithDigest(EVP_sha1())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("SHA-256")));
}

TEST_F(CertificateRequestTest, RefusesWhatIsNoRequestAndNeverOverwrites) {
  EXPECT_THAT(CheckCertificateRequest("not a request", "x.csr", {"acme", Role::kParty, {}, ""}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.csr is not a PEM")));
  EXPECT_THAT(SignCertificateRequest(ca_dir_, root_ + "/missing.csr", signed_dir_,
                                     {"acme", Role::kParty, {}, ""}, kYear),
              StatusIs(absl::StatusCode::kNotFound));
  ASSERT_THAT(CreateCertificateRequest(partner_dir_, "acme", Role::kParty, {}), IsOk());
  const std::string key = ReadFile(partner_dir_ + "/acme.key");
  EXPECT_THAT(CreateCertificateRequest(partner_dir_, "acme", Role::kParty, {}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(ReadFile(partner_dir_ + "/acme.key"), key);
  EXPECT_THAT(CreateCertificateRequest(partner_dir_, "Bad Name", Role::kParty, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::pki::csr_test
