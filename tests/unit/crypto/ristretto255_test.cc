#include "common/crypto/ristretto255.h"

#include <sodium.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/crypto/hex.h"

namespace fedmf::crypto {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

TEST(Ristretto255Test, HashIsDeterministicAndDomainSeparated) {
  auto a = HashToRistretto("d1", "user-17");
  auto b = HashToRistretto("d1", "user-17");
  auto c = HashToRistretto("d2", "user-17");
  auto d = HashToRistretto("d1", "user-18");
  // The length prefix keeps ("d1x", "y") and ("d1", "xy") apart.
  auto e = HashToRistretto("d1u", "ser-17");
  ASSERT_THAT(a.status(), IsOk());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_NE(*a, *d);
  EXPECT_NE(*a, *e);
  EXPECT_THAT(CheckRistrettoPoint(*a), IsOk());
}

// RFC 9496 appendix A.3: the one-way map of SHA-512 of each string. Checks
// that the map we call is the RFC's (our HashToRistretto adds a domain in
// front of the same map).
TEST(Ristretto255Test, OneWayMapMatchesRfc9496) {
  const std::string input = "Ristretto is traditionally a short shot of espresso coffee";
  uint8_t digest[crypto_hash_sha512_BYTES];
  crypto_hash_sha512(digest, reinterpret_cast<const uint8_t*>(input.data()), input.size());
  RistrettoPoint p;
  ASSERT_EQ(crypto_core_ristretto255_from_hash(p.data(), digest), 0);
  EXPECT_EQ(crypto::testing::ToHex(p),
            "3066f82a1a747d45120d1740f14358531a8f04bbffe6a819f86dfe50f44a0a46");
}

TEST(Ristretto255Test, ScalarsCommuteAndInvert) {
  random::Csprng rng = random::Csprng::FromSeed(7);
  auto k1 = RistrettoScalar::Random(rng);
  auto k2 = RistrettoScalar::Random(rng);
  ASSERT_THAT(k1.status(), IsOk());
  ASSERT_THAT(k2.status(), IsOk());
  ASSERT_OK_AND_ASSIGN(auto h, HashToRistretto("test", "x"));
  auto a = k1->Multiply(h);
  auto b = k2->Multiply(h);
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  auto ab = k2->Multiply(*a);
  auto ba = k1->Multiply(*b);
  ASSERT_THAT(ab.status(), IsOk());
  EXPECT_EQ(*ab, *ba);
  EXPECT_EQ(*k1->Times(*k2).Multiply(h), *ab);
  auto inv = k1->Inverse();
  ASSERT_THAT(inv.status(), IsOk());
  EXPECT_EQ(*inv->Multiply(*a), h);
  EXPECT_NE(*a, h);
}

TEST(Ristretto255Test, RejectsIdentityAndNonCanonicalEncodings) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  ASSERT_OK_AND_ASSIGN(auto k, RistrettoScalar::Random(rng));
  RistrettoPoint identity{};
  EXPECT_THAT(CheckRistrettoPoint(identity),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("identity")));
  EXPECT_THAT(k.Multiply(identity).status(), StatusIs(absl::StatusCode::kInvalidArgument));
  RistrettoPoint all_ones;
  all_ones.fill(0xff);  // not a field element below p
  EXPECT_THAT(CheckRistrettoPoint(all_ones),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("canonical")));
  auto h = HashToRistretto("test", "x");
  RistrettoPoint odd = *h;
  odd[0] |= 1;  // ristretto encodings are even ("non-negative") field elements
  if (odd != *h) {
    EXPECT_THAT(CheckRistrettoPoint(odd), StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST(Ristretto255Test, SeededScalarsAreReproducible) {
  random::Csprng r1 = random::Csprng::FromSeed(3);
  random::Csprng r2 = random::Csprng::FromSeed(3);
  auto h = HashToRistretto("test", "y");
  EXPECT_EQ(*RistrettoScalar::Random(r1)->Multiply(*h), *RistrettoScalar::Random(r2)->Multiply(*h));
}

}  // namespace
}  // namespace fedmf::crypto
