#include "common/crypto/x25519.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/crypto/hex.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::crypto {
namespace {

using testing::Hex;
using testing::ToHex;

X25519PublicKey Pub(std::string_view hex) {
  absl::StatusOr<X25519PublicKey> k = ParseX25519PublicKey(Hex(hex));
  EXPECT_THAT(k, IsOk());
  return k.ok() ? *k : X25519PublicKey{};
}

// X25519(scalar, u) through the public API: the scalar becomes a private key,
// u a peer public key.
std::string X25519Hex(std::string_view scalar_hex, std::string_view u_hex) {
  absl::StatusOr<X25519PrivateKey> k = X25519PrivateKey::FromBytes(Hex(scalar_hex));
  EXPECT_THAT(k, IsOk());
  if (!k.ok()) return "";
  absl::StatusOr<SecretBytes> out = k->Agree(Pub(u_hex));
  EXPECT_THAT(out, IsOk());
  return out.ok() ? ToHex(out->span()) : "";
}

// RFC 7748 §5.2, the two single-shot vectors. The second u has bit 255 set,
// which an implementation must ignore.
TEST(X25519Test, Rfc7748Section52Vectors) {
  EXPECT_EQ(X25519Hex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
                      "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c"),
            "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
  EXPECT_EQ(X25519Hex("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
                      "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493"),
            "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957");
}

// RFC 7748 §5.2 iterated test: k = u = 9; then k, u = X25519(k, u), k.
TEST(X25519Test, Rfc7748Section52Iterated) {
  std::string k = "0900000000000000000000000000000000000000000000000000000000000000";
  std::string u = k;
  for (int i = 1; i <= 1000; ++i) {
    std::string next = X25519Hex(k, u);
    ASSERT_FALSE(next.empty());
    u = k;
    k = next;
    if (i == 1) {
      EXPECT_EQ(k, "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079");
    }
  }
  EXPECT_EQ(k, "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51");
}

// RFC 7748 §6.1: Alice and Bob.
TEST(X25519Test, Rfc7748Section61DiffieHellman) {
  auto alice = X25519PrivateKey::FromBytes(
      Hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"));
  auto bob = X25519PrivateKey::FromBytes(
      Hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"));
  ASSERT_TRUE(alice.ok() && bob.ok());
  EXPECT_EQ(ToHex(alice->public_key()),
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
  EXPECT_EQ(ToHex(bob->public_key()),
            "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
  auto k_ab = alice->Agree(bob->public_key());
  auto k_ba = bob->Agree(alice->public_key());
  ASSERT_TRUE(k_ab.ok() && k_ba.ok());
  EXPECT_EQ(ToHex(k_ab->span()),
            "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
  EXPECT_EQ(ToHex(k_ba->span()),
            "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
}

TEST(X25519Test, AgreementIsSymmetricForRandomKeys) {
  random::Csprng rng = random::Csprng::FromSeed(42);
  for (int i = 0; i < 50; ++i) {
    auto a = X25519PrivateKey::Generate(rng);
    auto b = X25519PrivateKey::Generate(rng);
    ASSERT_TRUE(a.ok() && b.ok());
    auto ab = a->Agree(b->public_key());
    auto ba = b->Agree(a->public_key());
    ASSERT_TRUE(ab.ok() && ba.ok());
    EXPECT_EQ(*ab, *ba);
    EXPECT_NE(a->public_key(), b->public_key());
  }
}

TEST(X25519Test, GenerationIsDeterministicUnderASeed) {
  random::Csprng r1 = random::Csprng::FromSeed(7), r2 = random::Csprng::FromSeed(7),
                 r3 = random::Csprng::FromSeed(8);
  auto a = X25519PrivateKey::Generate(r1);
  auto b = X25519PrivateKey::Generate(r2);
  auto c = X25519PrivateKey::Generate(r3);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->public_key(), b->public_key());
  EXPECT_NE(a->public_key(), c->public_key());
}

// What secure aggregation relies on: a key rebuilt from its exported bytes
// (after Shamir reconstruction) agrees exactly like the original.
TEST(X25519Test, ExportAndReimportPreservesTheKey) {
  random::Csprng rng = random::Csprng::FromSeed(3);
  auto a = X25519PrivateKey::Generate(rng);
  auto b = X25519PrivateKey::Generate(rng);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_OK_AND_ASSIGN(auto raw, a->ExportBytes());
  ASSERT_EQ(raw.size(), kX25519KeyBytes);
  auto again = X25519PrivateKey::FromBytes(raw.span());
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->public_key(), a->public_key());
  EXPECT_EQ(*again->Agree(b->public_key()), *a->Agree(b->public_key()));
  // The scalar comes back exactly as given (unclamped).
  const auto rfc = Hex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4");
  ASSERT_OK_AND_ASSIGN(auto k, X25519PrivateKey::FromBytes(rfc));
  EXPECT_EQ(ToHex(k.ExportBytes()->span()), ToHex(rfc));
}

// Every small-order u (libsodium's blocklist: 0, 1, the two order-8 points,
// p-1, p, p+1) makes the result all-zero; a peer sending one is rejected.
TEST(X25519Test, RejectsLowOrderPoints) {
  random::Csprng rng = random::Csprng::FromSeed(11);
  ASSERT_OK_AND_ASSIGN(auto key, X25519PrivateKey::Generate(rng));
  for (std::string_view bad : {
           "0000000000000000000000000000000000000000000000000000000000000000",
           "0100000000000000000000000000000000000000000000000000000000000000",
           "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
           "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
           "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
           "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
           "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
       }) {
    absl::StatusOr<SecretBytes> s = key.Agree(Pub(bad));
    ASSERT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find("low-order"), absl::string_view::npos);
  }
  // A good agreement still works after the failures (no stale error state).
  ASSERT_OK_AND_ASSIGN(auto other, X25519PrivateKey::Generate(rng));
  EXPECT_THAT(key.Agree(other.public_key()), IsOk());
}

TEST(X25519Test, RejectsWrongSizes) {
  EXPECT_EQ(X25519PrivateKey::FromBytes(std::vector<uint8_t>(31)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(X25519PrivateKey::FromBytes(std::vector<uint8_t>(33)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseX25519PublicKey(std::vector<uint8_t>(0)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseX25519PublicKey(std::vector<uint8_t>(64)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedmf::crypto
