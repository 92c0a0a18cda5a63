#include "common/pki/certificate_signature.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/pki/ca.h"
#include "gtest/gtest.h"
#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;

namespace fedmf::pki {
namespace {

using ::fedmf::testing::ReadFile;

constexpr absl::Duration kOneYear = absl::Hours(24 * 365);

class CertificateSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path();
    ASSERT_THAT(InitCa(root_ + "/ca", "testfed", 10 * kOneYear), IsOk());
    ASSERT_TRUE(
        IssueCertificate(root_ + "/ca", root_ + "/out", "host-a", Role::kDevice, {}, kOneYear)
            .ok());
    ASSERT_TRUE(
        IssueCertificate(root_ + "/ca", root_ + "/out", "party-1", Role::kParty, {}, kOneYear)
            .ok());
    ASSERT_THAT(InitCa(root_ + "/other", "testfed", 10 * kOneYear), IsOk());
    ASSERT_TRUE(
        IssueCertificate(root_ + "/other", root_ + "/out2", "host-a", Role::kDevice, {}, kOneYear)
            .ok());
  }
  std::string Read(const std::string& rel) const { return ReadFile(root_ + "/" + rel); }

  ::fedmf::testing::ScopedTempDir tmp_{"fedmf_certsig_test."};
  std::string root_;
};

TEST_F(CertificateSignatureTest, HostSignatureVerifiesAgainstTheCaAndNamesTheHost) {
  const std::vector<uint8_t> statement = {1, 2, 3, 4};
  absl::StatusOr<std::vector<uint8_t>> sig =
      SignWithCertificateKey(Read("out/host-a.key"), statement);
  ASSERT_THAT(sig, IsOk());
  absl::StatusOr<PeerIdentity> id = VerifyCertificateSignature(
      Read("out/host-a.crt"), Read("ca/ca.crt"), Role::kDevice, statement, *sig);
  ASSERT_THAT(id, IsOk());
  EXPECT_EQ(id->name, "host-a");
  EXPECT_EQ(id->role, Role::kDevice);
}

TEST_F(CertificateSignatureTest, RefusesOtherStatementSignatureRoleOrCa) {
  const std::vector<uint8_t> statement = {1, 2, 3, 4};
  const std::vector<uint8_t> other = {1, 2, 3, 5};
  std::vector<uint8_t> sig = *SignWithCertificateKey(Read("out/host-a.key"), statement);
  const std::string cert = Read("out/host-a.crt");
  const std::string ca = Read("ca/ca.crt");
  EXPECT_EQ(VerifyCertificateSignature(cert, ca, Role::kDevice, other, sig).status().code(),
            absl::StatusCode::kUnauthenticated);
  std::vector<uint8_t> bad = sig;
  bad[bad.size() / 2] ^= 1;
  EXPECT_EQ(VerifyCertificateSignature(cert, ca, Role::kDevice, statement, bad).status().code(),
            absl::StatusCode::kUnauthenticated);
  // A party certificate is not a device host.
  const std::vector<uint8_t> party_sig =
      *SignWithCertificateKey(Read("out/party-1.key"), statement);
  EXPECT_EQ(
      VerifyCertificateSignature(Read("out/party-1.crt"), ca, Role::kDevice, statement, party_sig)
          .status()
          .code(),
      absl::StatusCode::kUnauthenticated);
  // The same name under another CA (whoever runs a rogue CA) is refused.
  const std::vector<uint8_t> rogue_sig =
      *SignWithCertificateKey(Read("out2/host-a.key"), statement);
  EXPECT_EQ(
      VerifyCertificateSignature(Read("out2/host-a.crt"), ca, Role::kDevice, statement, rogue_sig)
          .status()
          .code(),
      absl::StatusCode::kUnauthenticated);
  // Someone else's key over a valid certificate.
  EXPECT_EQ(
      VerifyCertificateSignature(cert, ca, Role::kDevice, statement, party_sig).status().code(),
      absl::StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace fedmf::pki
