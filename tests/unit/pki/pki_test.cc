#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/pki/ca.h"
#include "common/pki/identity.h"
#include "common/pki/identity_cache.h"
#include "common/pki/role.h"
#include "common/pki/tls_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::pki {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

const absl::Duration kYear = absl::Hours(24 * 365);

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
struct NamesFree {
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
};
struct BasicConstraintsFree {
  void operator()(BASIC_CONSTRAINTS* p) const { BASIC_CONSTRAINTS_free(p); }
};
struct EkuFree {
  void operator()(EXTENDED_KEY_USAGE* p) const { EXTENDED_KEY_USAGE_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free_all(p); }
};

X509Ptr ParsePem(const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

using ::fedmf::testing::ReadFile;

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

mode_t FileMode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

// "DNS:x" / "IP:1.2.3.4" for every subjectAltName entry.
std::vector<std::string> SubjectAltNames(X509* cert) {
  std::vector<std::string> out;
  std::unique_ptr<GENERAL_NAMES, NamesFree> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
    if (gn->type == GEN_DNS) {
      const ASN1_IA5STRING* s = gn->d.dNSName;
      out.push_back("DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                         ASN1_STRING_length(s)));
    } else if (gn->type == GEN_IPADD) {
      const unsigned char* b = ASN1_STRING_get0_data(gn->d.iPAddress);
      const int len = ASN1_STRING_length(gn->d.iPAddress);
      std::string ip;
      if (len == 4) {
        for (int j = 0; j < 4; ++j) ip += (j ? "." : "") + std::to_string(b[j]);
      } else {
        ip = "v6:" + std::to_string(len) + ":" + std::to_string(b[15]);
      }
      out.push_back("IP:" + ip);
    } else {
      out.push_back("other");
    }
  }
  return out;
}

// A fresh directory per test, removed afterwards.
class PkiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path();
    ca_dir_ = root_ + "/ca";
    out_dir_ = root_ + "/out";
  }
  void InitTestCa() { ASSERT_TRUE(InitCa(ca_dir_, "testfed", 10 * kYear).ok()); }
  absl::Status Issue(const std::string& name, Role role = Role::kParty,
                     std::vector<std::string> sans = {}, absl::Duration validity = kYear) {
    return IssueCertificate(ca_dir_, out_dir_, name, role, sans, validity);
  }
  std::string CaPem() const { return ReadFile(ca_dir_ + "/ca.crt"); }
  std::string CertPem(const std::string& name) const {
    return ReadFile(out_dir_ + "/" + name + ".crt");
  }

  ::fedmf::testing::ScopedTempDir tmp_{"fedmf_pki_test."};
  std::string root_, ca_dir_, out_dir_;
};

TEST(RoleTest, RoundTripsEveryRole) {
  for (Role r : {Role::kServer, Role::kParty, Role::kDevice, Role::kAggregator, Role::kOperator}) {
    absl::StatusOr<Role> back = RoleFromString(RoleToString(r));
    ASSERT_THAT(back, IsOk());
    EXPECT_EQ(*back, r);
  }
  EXPECT_EQ(RoleToString(Role::kAggregator), "aggregator");
  EXPECT_THAT(RoleFromString("Party"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RoleFromString(""), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(PkiTest, InitIssueVerify) {
  InitTestCa();
  ASSERT_THAT(Issue("party-1"), IsOk());
  EXPECT_THAT(VerifyCertificate(CertPem("party-1"), CaPem()), IsOk());
  // ca.crt is copied verbatim next to the leaf.
  EXPECT_EQ(ReadFile(out_dir_ + "/ca.crt"), CaPem());
  // A second issue into the same directory keeps the existing copy.
  ASSERT_THAT(Issue("party-2"), IsOk());
  EXPECT_THAT(VerifyCertificate(CertPem("party-2"), CaPem()), IsOk());

  absl::StatusOr<TlsFiles> files = LoadTlsFiles(out_dir_, "party-1");
  ASSERT_THAT(files, IsOk());
  EXPECT_EQ(files->ca_cert_pem, CaPem());
  EXPECT_EQ(files->cert_pem, CertPem("party-1"));
  EXPECT_THAT(files->key_pem, HasSubstr("BEGIN PRIVATE KEY"));

  // No temp files are left behind.
  std::set<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(out_dir_)) {
    entries.insert(e.path().filename().string());
  }
  EXPECT_EQ(entries, (std::set<std::string>{"ca.crt", "party-1.crt", "party-1.key", "party-2.crt",
                                            "party-2.key"}));
}

TEST_F(PkiTest, IssueIntoCaDirectoryItself) {
  InitTestCa();
  ASSERT_THAT(IssueCertificate(ca_dir_, ca_dir_, "server", Role::kServer, {}, kYear), IsOk());
  EXPECT_THAT(LoadTlsFiles(ca_dir_, "server"), IsOk());
}

TEST_F(PkiTest, CaCertificateHasCaExtensions) {
  InitTestCa();
  X509Ptr ca = ParsePem(CaPem());
  ASSERT_TRUE(ca);
  EXPECT_EQ(X509_get_version(ca.get()), 2);  // v3
  char cn[128] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(ca.get()), NID_commonName, cn, sizeof(cn));
  EXPECT_STREQ(cn, "testfed CA");
  EXPECT_EQ(X509_check_ca(ca.get()), 1);

  int crit = -1;
  std::unique_ptr<BASIC_CONSTRAINTS, BasicConstraintsFree> bc(static_cast<BASIC_CONSTRAINTS*>(
      X509_get_ext_d2i(ca.get(), NID_basic_constraints, &crit, nullptr)));
  ASSERT_TRUE(bc);
  EXPECT_TRUE(bc->ca);
  EXPECT_EQ(crit, 1);
  EXPECT_EQ(X509_get_key_usage(ca.get()), static_cast<uint32_t>(KU_KEY_CERT_SIGN | KU_CRL_SIGN));

  // ECDSA P-256.
  EVP_PKEY* pub = X509_get0_pubkey(ca.get());
  ASSERT_NE(pub, nullptr);
  EXPECT_EQ(EVP_PKEY_get_base_id(pub), EVP_PKEY_EC);
  char group[64] = {};
  size_t group_len = 0;
  ASSERT_EQ(EVP_PKEY_get_group_name(pub, group, sizeof(group), &group_len), 1);
  EXPECT_STREQ(group, "prime256v1");

  // Self-signed and verifies against itself.
  EXPECT_THAT(VerifyCertificate(CaPem(), CaPem()), IsOk());
  // Random 128-bit serial (a leading zero byte is possible but rare).
  const ASN1_INTEGER* serial = X509_get0_serialNumber(ca.get());
  EXPECT_GE(ASN1_STRING_length(serial), 14);
  EXPECT_LE(ASN1_STRING_length(serial), 16);

  absl::StatusOr<absl::Time> not_after = CertificateNotAfter(CaPem());
  ASSERT_THAT(not_after, IsOk());
  EXPECT_LT(absl::AbsDuration(*not_after - (absl::Now() + 10 * kYear)), absl::Minutes(1));
}

TEST_F(PkiTest, LeafCertificateExtensionsAndSans) {
  InitTestCa();
  ASSERT_TRUE(Issue("server", Role::kServer,
                    {"localhost", "127.0.0.1", "::1", "fedmf.example.org", "server", "LOCALHOST",
                     "127.0.0.1"})
                  .ok());
  X509Ptr cert = ParsePem(CertPem("server"));
  ASSERT_TRUE(cert);
  // Duplicates (case-insensitively for DNS) are dropped.
  EXPECT_THAT(SubjectAltNames(cert.get()),
              UnorderedElementsAre("DNS:server", "DNS:localhost", "IP:127.0.0.1", "IP:v6:16:1",
                                   "DNS:fedmf.example.org"));
  // What gRPC's hostname check does.
  EXPECT_EQ(X509_check_host(cert.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "::1", 0), 1);
  EXPECT_NE(X509_check_host(cert.get(), "evil.example", 0, 0, nullptr), 1);

  EXPECT_EQ(X509_check_ca(cert.get()), 0);
  int crit = -1;
  std::unique_ptr<BASIC_CONSTRAINTS, BasicConstraintsFree> bc(static_cast<BASIC_CONSTRAINTS*>(
      X509_get_ext_d2i(cert.get(), NID_basic_constraints, &crit, nullptr)));
  ASSERT_TRUE(bc);
  EXPECT_FALSE(bc->ca);
  std::unique_ptr<EXTENDED_KEY_USAGE, EkuFree> eku(static_cast<EXTENDED_KEY_USAGE*>(
      X509_get_ext_d2i(cert.get(), NID_ext_key_usage, nullptr, nullptr)));
  ASSERT_TRUE(eku);
  std::set<int> nids;
  for (int i = 0; i < sk_ASN1_OBJECT_num(eku.get()); ++i) {
    nids.insert(OBJ_obj2nid(sk_ASN1_OBJECT_value(eku.get(), i)));
  }
  EXPECT_EQ(nids, (std::set<int>{NID_server_auth, NID_client_auth}));
  EXPECT_EQ(X509_check_purpose(cert.get(), X509_PURPOSE_SSL_SERVER, 0), 1);
  EXPECT_EQ(X509_check_purpose(cert.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);

  X509Ptr ca = ParsePem(CaPem());
  EXPECT_EQ(X509_check_issued(ca.get(), cert.get()), X509_V_OK);
}

TEST_F(PkiTest, BadSanEntriesRejected) {
  InitTestCa();
  for (const std::string& bad :
       std::vector<std::string>{"", "a,IP:1.2.3.4", "256.1.1.1", "1.2.3", "*.example.org", "-x.org",
                                "a..b", "host name", "x/y"}) {
    absl::Status s = Issue("p", Role::kParty, {bad});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  // Nothing was written for the rejected requests.
  EXPECT_FALSE(std::filesystem::exists(out_dir_ + "/p.key"));
}

TEST_F(PkiTest, SerialsAreUnique) {
  InitTestCa();
  ASSERT_THAT(Issue("a"), IsOk());
  ASSERT_THAT(Issue("b"), IsOk());
  X509Ptr a = ParsePem(CertPem("a")), b = ParsePem(CertPem("b"));
  EXPECT_NE(ASN1_INTEGER_cmp(X509_get0_serialNumber(a.get()), X509_get0_serialNumber(b.get())), 0);
}

TEST_F(PkiTest, CertificateFromAnotherCaFails) {
  InitTestCa();
  const std::string other_ca = root_ + "/other-ca";
  const std::string other_out = root_ + "/other-out";
  ASSERT_TRUE(InitCa(other_ca, "testfed", 10 * kYear).ok());  // Same CN!
  ASSERT_THAT(IssueCertificate(other_ca, other_out, "party-1", Role::kParty, {}, kYear), IsOk());
  const std::string foreign = ReadFile(other_out + "/party-1.crt");
  absl::Status s = VerifyCertificate(foreign, CaPem());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_THAT(VerifyCertificate(foreign, ReadFile(other_ca + "/ca.crt")), IsOk());

  // Loading a directory whose ca.crt is not the issuer fails at startup.
  std::filesystem::copy_file(ca_dir_ + "/ca.crt", other_out + "/ca.crt",
                             std::filesystem::copy_options::overwrite_existing);
  absl::StatusOr<TlsFiles> files = LoadTlsFiles(other_out, "party-1");
  EXPECT_EQ(files.status().code(), absl::StatusCode::kFailedPrecondition);

  // Issuing into a directory holding a different CA's ca.crt is refused.
  ASSERT_TRUE(Issue("y").ok());  // out_dir_/ca.crt is now our CA.
  absl::Status mixed = IssueCertificate(other_ca, out_dir_, "x", Role::kParty, {}, kYear);
  EXPECT_EQ(mixed.code(), absl::StatusCode::kFailedPrecondition) << mixed;
  EXPECT_FALSE(std::filesystem::exists(out_dir_ + "/x.key"));
}

TEST_F(PkiTest, IdentityRoundTripsNameAndRole) {
  InitTestCa();
  const std::vector<std::pair<std::string, Role>> cases = {{"coord", Role::kServer},
                                                           {"bank.a", Role::kParty},
                                                           {"dev_0042", Role::kDevice},
                                                           {"agg-1", Role::kAggregator},
                                                           {"ops", Role::kOperator}};
  for (const auto& [name, role] : cases) {
    ASSERT_THAT(Issue(name, role), IsOk()) << name;
    absl::StatusOr<PeerIdentity> id = IdentityFromCertificatePem(CertPem(name));
    ASSERT_THAT(id, IsOk());
    EXPECT_EQ(*id, (PeerIdentity{name, role}));
  }
}

TEST_F(PkiTest, IdentityRejectsGarbageAndCaCertificate) {
  InitTestCa();
  EXPECT_EQ(IdentityFromCertificatePem("not a cert").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(IdentityFromCertificatePem("").status().code(), absl::StatusCode::kInvalidArgument);
  // The CA has no OU and its CN is not a valid name.
  EXPECT_THAT(IdentityFromCertificatePem(CaPem()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(VerifyCertificate("junk", CaPem()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(VerifyCertificate(CaPem(), "junk"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(PkiTest, IdentityCacheParsesEachCertificateOnce) {
  InitTestCa();
  ASSERT_THAT(Issue("bank.a", Role::kParty), IsOk());
  ASSERT_THAT(Issue("agg-1", Role::kAggregator), IsOk());
  IdentityCache cache(/*max_entries=*/8);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<PeerIdentity> a = cache.Lookup(CertPem("bank.a"));
    ASSERT_THAT(a, IsOk());
    EXPECT_EQ(*a, (PeerIdentity{"bank.a", Role::kParty}));
    absl::StatusOr<PeerIdentity> b = cache.Lookup(CertPem("agg-1"));
    ASSERT_THAT(b, IsOk());
    EXPECT_EQ(*b, (PeerIdentity{"agg-1", Role::kAggregator}));
  }
  EXPECT_EQ(cache.parses(), 2);
  EXPECT_EQ(cache.size(), 2u);
}

TEST_F(PkiTest, IdentityCacheKeysOnTheWholeCertificateAndKeepsNoRefusal) {
  InitTestCa();
  ASSERT_THAT(Issue("bank.a", Role::kParty), IsOk());
  IdentityCache cache(/*max_entries=*/8);
  const std::string pem = CertPem("bank.a");
  ASSERT_THAT(cache.Lookup(pem), IsOk());
  // The same bytes with one character changed inside the base64 body are a
  // different key: parsed (and refused or answered) on their own.
  std::string altered = pem;
  altered[altered.size() / 2] = altered[altered.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(cache.Lookup(altered).ok(), IdentityFromCertificatePem(altered).ok());
  EXPECT_EQ(cache.parses(), 2);
  // A refusal is parsed again each time, and never held.
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(cache.Lookup("not a cert").status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(cache.Lookup(CaPem()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(cache.parses(), 5);
  EXPECT_LE(cache.size(), 2u);
}

TEST_F(PkiTest, IdentityCacheStartsOverWhenFull) {
  InitTestCa();
  const std::vector<std::string> names = {"p0", "p1", "p2"};
  for (const std::string& n : names) ASSERT_THAT(Issue(n), IsOk());
  IdentityCache cache(/*max_entries=*/2);
  ASSERT_THAT(cache.Lookup(CertPem("p0")), IsOk());
  ASSERT_THAT(cache.Lookup(CertPem("p1")), IsOk());
  EXPECT_EQ(cache.size(), 2u);
  absl::StatusOr<PeerIdentity> third = cache.Lookup(CertPem("p2"));
  ASSERT_THAT(third, IsOk());
  EXPECT_EQ(third->name, "p2");
  EXPECT_EQ(cache.size(), 1u);  // cleared, then p2
  ASSERT_THAT(cache.Lookup(CertPem("p0")), IsOk());
  EXPECT_EQ(cache.parses(), 4);  // p0 was parsed again after the clear
}

TEST_F(PkiTest, RefusesToOverwriteCa) {
  InitTestCa();
  const std::string key_before = ReadFile(ca_dir_ + "/ca.key");
  const std::string crt_before = CaPem();
  absl::Status s = InitCa(ca_dir_, "other", kYear);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(s.message()), HasSubstr("ca.key"));
  EXPECT_EQ(ReadFile(ca_dir_ + "/ca.key"), key_before);
  EXPECT_EQ(CaPem(), crt_before);

  // A lone ca.crt (e.g. a crash between the two writes) also blocks.
  std::filesystem::remove(ca_dir_ + "/ca.key");
  s = InitCa(ca_dir_, "other", kYear);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(s.message()), HasSubstr("ca.crt"));
}

TEST_F(PkiTest, RefusesToOverwriteLeaf) {
  InitTestCa();
  ASSERT_THAT(Issue("party-1"), IsOk());
  const std::string before = CertPem("party-1");
  absl::Status s = Issue("party-1", Role::kServer);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(s.message()), HasSubstr("party-1.key"));
  EXPECT_EQ(CertPem("party-1"), before);
}

TEST_F(PkiTest, NameRules) {
  for (const std::string& good :
       std::vector<std::string>{"a", "0", "party-1", "bank.a_b-c", std::string(64, 'x')}) {
    EXPECT_THAT(ValidateName(good), IsOk()) << good;
  }
  for (const std::string& bad : std::vector<std::string>{
           std::string(), std::string(65, 'x'), std::string("Party"), std::string("-a"),
           std::string(".a"), std::string("_a"), std::string("a b"), std::string("a/b"),
           std::string("../x"), std::string("a\0b", 3), std::string("caf\xc3\xa9")}) {
    absl::Status s = ValidateName(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("a-z, 0-9"));
  }
  InitTestCa();
  absl::Status s = Issue("../escape");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(out_dir_));  // Rejected before any I/O.
  EXPECT_EQ(LoadTlsFiles(out_dir_, "Bad").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PkiTest, KeyFilesAreOwnerOnly) {
  InitTestCa();
  ASSERT_THAT(Issue("party-1"), IsOk());
  EXPECT_EQ(FileMode(ca_dir_ + "/ca.key"), 0600u);
  EXPECT_EQ(FileMode(out_dir_ + "/party-1.key"), 0600u);
  EXPECT_EQ(FileMode(ca_dir_ + "/ca.crt"), 0644u);
  EXPECT_EQ(FileMode(out_dir_ + "/party-1.crt"), 0644u);
  EXPECT_EQ(FileMode(ca_dir_), 0700u);
}

TEST_F(PkiTest, ValidityChecks) {
  EXPECT_EQ(InitCa(ca_dir_, "f", absl::ZeroDuration()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InitCa(ca_dir_, "f", -absl::Hours(1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InitCa(ca_dir_, "f", absl::InfiniteDuration()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InitCa(ca_dir_, "", kYear).code(), absl::StatusCode::kInvalidArgument);
  InitTestCa();
  EXPECT_EQ(Issue("p", Role::kParty, {}, absl::ZeroDuration()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Issue("p", Role::kParty, {}, -absl::Seconds(1)).code(),
            absl::StatusCode::kInvalidArgument);
  // Must not outlive the CA.
  EXPECT_EQ(Issue("p", Role::kParty, {}, 11 * kYear).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PkiTest, ExpiredCertificateFailsVerification) {
  InitTestCa();
  ASSERT_THAT(Issue("short", Role::kDevice, {}, absl::Hours(24)), IsOk());
  const std::string pem = CertPem("short");
  EXPECT_THAT(VerifyCertificate(pem, CaPem(), absl::Now() + absl::Hours(23)), IsOk());
  absl::Status s = VerifyCertificate(pem, CaPem(), absl::Now() + absl::Hours(25));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(s.message()), HasSubstr("expired"));
  s = VerifyCertificate(pem, CaPem(), absl::Now() - absl::Hours(1));
  EXPECT_THAT(std::string(s.message()), HasSubstr("not yet valid"));
}

TEST_F(PkiTest, LoadTlsFilesExplainsMissingAndMismatchedFiles) {
  absl::StatusOr<TlsFiles> files = LoadTlsFiles(out_dir_, "party-1");
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(files.status().message()), HasSubstr(out_dir_ + "/party-1.crt"));
  EXPECT_THAT(std::string(files.status().message()),
              HasSubstr("run: fedmf ca issue --name party-1 --role"));

  InitTestCa();
  ASSERT_THAT(Issue("party-1", Role::kParty), IsOk());
  ASSERT_THAT(Issue("party-2", Role::kParty), IsOk());

  const std::string key1 = ReadFile(out_dir_ + "/party-1.key");
  std::filesystem::remove(out_dir_ + "/party-1.key");
  files = LoadTlsFiles(out_dir_, "party-1");
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(files.status().message()), HasSubstr(out_dir_ + "/party-1.key"));
  // The role comes from the certificate.
  EXPECT_THAT(std::string(files.status().message()),
              HasSubstr("fedmf ca issue --name party-1 --role party"));

  // Someone else's key.
  WriteFile(out_dir_ + "/party-1.key", ReadFile(out_dir_ + "/party-2.key"));
  files = LoadTlsFiles(out_dir_, "party-1");
  EXPECT_EQ(files.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(files.status().message()), HasSubstr("does not match"));
  WriteFile(out_dir_ + "/party-1.key", key1);
  EXPECT_THAT(LoadTlsFiles(out_dir_, "party-1"), IsOk());

  // A certificate renamed to another party's file.
  WriteFile(out_dir_ + "/party-3.crt", CertPem("party-2"));
  WriteFile(out_dir_ + "/party-3.key", ReadFile(out_dir_ + "/party-2.key"));
  files = LoadTlsFiles(out_dir_, "party-3");
  EXPECT_EQ(files.status().code(), absl::StatusCode::kFailedPrecondition);

  std::filesystem::remove(out_dir_ + "/ca.crt");
  files = LoadTlsFiles(out_dir_, "party-1");
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(files.status().message()), HasSubstr("ca.crt"));
}

TEST_F(PkiTest, MissingCaIsNotFound) {
  absl::Status s = Issue("p");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("fedmf ca init"));
}

}  // namespace
}  // namespace fedmf::pki
