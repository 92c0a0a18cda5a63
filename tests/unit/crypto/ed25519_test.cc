#include "common/crypto/ed25519.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/crypto/hex.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::crypto {
namespace {

using testing::Hex;
using testing::ToHex;

struct Vector {
  const char* secret;
  const char* public_key;
  const char* message;
  const char* signature;
};

// RFC 8032 §7.1, TEST 1, 2 and 3.
const Vector kRfc8032[] = {
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b"
     "46b"
     "d25bf5f0595bbe24655141438e7a100b"},
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11"
     "d8c"
     "387b2eaeb4302aeeb00d291612bb0c00"},
    {"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc"
     "659"
     "4a7c15e9716ed28dc027beceea1ec40a"},
};

TEST(Ed25519Test, Rfc8032KnownAnswers) {
  for (const Vector& v : kRfc8032) {
    absl::StatusOr<Ed25519PrivateKey> key = Ed25519PrivateKey::FromSeed(Hex(v.secret));
    ASSERT_THAT(key, IsOk());
    EXPECT_EQ(ToHex(key->public_key()), v.public_key);
    const std::vector<uint8_t> message = Hex(v.message);
    absl::StatusOr<std::vector<uint8_t>> sig = key->Sign(message);
    ASSERT_THAT(sig, IsOk());
    EXPECT_EQ(ToHex(*sig), v.signature);
    EXPECT_THAT(Ed25519Verify(key->public_key(), message, *sig), IsOk());
  }
}

TEST(Ed25519Test, RejectsTamperedMessageSignatureAndKey) {
  const Vector& v = kRfc8032[1];
  absl::StatusOr<Ed25519PublicKey> pub = ParseEd25519PublicKey(Hex(v.public_key));
  ASSERT_THAT(pub, IsOk());
  std::vector<uint8_t> message = Hex(v.message);
  std::vector<uint8_t> sig = Hex(v.signature);
  ASSERT_THAT(Ed25519Verify(*pub, message, sig), IsOk());

  std::vector<uint8_t> other_message = {0x73};
  EXPECT_EQ(Ed25519Verify(*pub, other_message, sig).code(), absl::StatusCode::kUnauthenticated);
  std::vector<uint8_t> bad_sig = sig;
  bad_sig[10] ^= 1;
  EXPECT_EQ(Ed25519Verify(*pub, message, bad_sig).code(), absl::StatusCode::kUnauthenticated);
  Ed25519PublicKey other_key = *ParseEd25519PublicKey(Hex(kRfc8032[0].public_key));
  EXPECT_EQ(Ed25519Verify(other_key, message, sig).code(), absl::StatusCode::kUnauthenticated);
  sig.pop_back();
  EXPECT_EQ(Ed25519Verify(*pub, message, sig).code(), absl::StatusCode::kUnauthenticated);
}

TEST(Ed25519Test, ParseAndSeedSizes) {
  EXPECT_EQ(ParseEd25519PublicKey(std::vector<uint8_t>(31)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Ed25519PrivateKey::FromSeed(std::vector<uint8_t>(33)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Ed25519Test, GeneratedKeysSignAndAreDistinct) {
  random::Csprng rng = random::Csprng::FromSeed(7);
  absl::StatusOr<Ed25519PrivateKey> a = Ed25519PrivateKey::Generate(rng);
  absl::StatusOr<Ed25519PrivateKey> b = Ed25519PrivateKey::Generate(rng);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->public_key(), b->public_key());
  const std::vector<uint8_t> m = {1, 2, 3};
  absl::StatusOr<std::vector<uint8_t>> sig = a->Sign(m);
  ASSERT_THAT(sig, IsOk());
  EXPECT_THAT(Ed25519Verify(a->public_key(), m, *sig), IsOk());
  EXPECT_THAT(Ed25519Verify(b->public_key(), m, *sig),
              StatusIs(absl::StatusCode::kUnauthenticated));
}

}  // namespace
}  // namespace fedmf::crypto
