// Shamir shares as secure aggregation uses them: robust recovery against a
// lying holder, and t-1 shares revealing nothing usable.
#include "common/secagg/secret_recovery.h"

#include <array>
#include <vector>

#include "common/crypto/gf127.h"
#include "common/crypto/shamir.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::secagg {
namespace {

using crypto::SecretBytes;
using crypto::ShamirShare;

std::vector<uint8_t> RandomSecret(random::Csprng& rng) {
  std::vector<uint8_t> s(32);
  rng.FillBytes(s.data(), s.size());
  return s;
}

std::vector<HeldShare> Held(const std::vector<ShamirShare>& shares) {
  std::vector<HeldShare> out;
  for (const ShamirShare& s : shares) out.push_back({100 + s.x, s});
  return out;
}

TEST(SecretRecoveryTest, RecoversWithExactlyTShares) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  const auto secret = RandomSecret(rng);
  ASSERT_OK_AND_ASSIGN(auto shares, crypto::ShamirSplit(secret, 4, 9, rng));
  std::vector<HeldShare> held = Held(shares);
  held.resize(4);
  const SecretBytes want(secret);
  auto r = RecoverVerifiedSecret(
      held, 4, [&](const SecretBytes& s) { return s == want; }, rng);
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->secret == want);
  EXPECT_TRUE(r->inconsistent_holders.empty());
}

TEST(SecretRecoveryTest, ALyingHolderCannotCorruptTheSecretAndIsNamed) {
  random::Csprng rng = random::Csprng::FromSeed(2);
  const auto secret = RandomSecret(rng);
  ASSERT_OK_AND_ASSIGN(auto shares, crypto::ShamirSplit(secret, 4, 9, rng));
  std::vector<HeldShare> held = Held(shares);
  held[1].share.y[0] ^= 1;  // among the first t: the naive reconstruction is wrong
  held[6].share.y[5] ^= 1;
  const SecretBytes want(secret);
  auto r = RecoverVerifiedSecret(
      held, 4, [&](const SecretBytes& s) { return s == want; }, rng);
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->secret == want);
  EXPECT_EQ(r->inconsistent_holders, (std::vector<DeviceId>{held[1].holder, held[6].holder}));
}

TEST(SecretRecoveryTest, FailsWithoutEnoughGoodShares) {
  random::Csprng rng = random::Csprng::FromSeed(3);
  const auto secret = RandomSecret(rng);
  ASSERT_OK_AND_ASSIGN(auto shares, crypto::ShamirSplit(secret, 4, 5, rng));
  std::vector<HeldShare> held = Held(shares);
  const SecretBytes want(secret);
  const auto verify = [&](const SecretBytes& s) { return s == want; };
  std::vector<HeldShare> three(held.begin(), held.begin() + 3);
  EXPECT_EQ(RecoverVerifiedSecret(three, 4, verify, rng).status().code(),
            absl::StatusCode::kFailedPrecondition);
  held[0].share.y[0] ^= 1;
  held[1].share.y[0] ^= 1;  // only 3 good of 5
  EXPECT_EQ(RecoverVerifiedSecret(held, 4, verify, rng).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(SecretRecoveryTest, TMinusOneSharesDoNotReconstruct) {
  random::Csprng rng = random::Csprng::FromSeed(4);
  const auto secret = RandomSecret(rng);
  ASSERT_OK_AND_ASSIGN(auto shares, crypto::ShamirSplit(secret, 5, 8, rng));
  std::vector<ShamirShare> four(shares.begin(), shares.begin() + 4);
  EXPECT_THAT(crypto::ShamirReconstruct(four, 5), StatusIs(absl::StatusCode::kInvalidArgument));
  // Pretending the threshold were t-1 yields garbage, not the secret.
  auto wrong = crypto::ShamirReconstruct(four, 4);
  EXPECT_FALSE(wrong.ok() && *wrong == SecretBytes(secret));
}

// t-1 shares are consistent with EVERY secret: for any candidate s', one
// more point completes them to a valid sharing of s'. So they cannot tell
// the true secret from any other.
TEST(SecretRecoveryTest, TMinusOneSharesAreConsistentWithAnySecret) {
  random::Csprng rng = random::Csprng::FromSeed(5);
  constexpr size_t kT = 4;
  const auto secret = RandomSecret(rng);
  auto shares = crypto::ShamirSplit(secret, kT, 10, rng);
  ASSERT_THAT(shares, IsOk());
  const std::vector<ShamirShare> known(shares->begin(), shares->begin() + kT - 1);
  for (int trial = 0; trial < 5; ++trial) {
    const auto other = RandomSecret(rng);
    ShamirShare forged;
    forged.x = 9;
    forged.secret_size = 32;
    forged.y.resize(known[0].y.size());
    for (size_t c = 0; c < crypto::ShamirChunkCount(32); ++c) {
      // The degree-(t-1) polynomial through (0, chunk of `other`) and the known shares.
      std::vector<crypto::gf127::Elem> xs = {0}, ys;
      crypto::gf127::Elem chunk = 0;
      const size_t begin = c * crypto::kShamirChunkBytes;
      const size_t end = std::min<size_t>(32, begin + crypto::kShamirChunkBytes);
      for (size_t i = end; i-- > begin;) chunk = (chunk << 8) | other[i];
      ys.push_back(chunk);
      for (const ShamirShare& s : known) {
        xs.push_back(s.x);
        ys.push_back(crypto::gf127::Load(s.y.data() + 16 * c));
      }
      ASSERT_OK_AND_ASSIGN(auto y, crypto::gf127::InterpolateAt(xs, ys, forged.x));
      crypto::gf127::Store(y, forged.y.data() + 16 * c);
    }
    std::vector<ShamirShare> completed = known;
    completed.push_back(forged);
    ASSERT_OK_AND_ASSIGN(auto r, crypto::ShamirReconstruct(completed, kT));
    EXPECT_TRUE(r == SecretBytes(other));
  }
}

// And statistically: a share's value does not depend on the secret. The low
// byte of share #1's first word, over many splits of two very different
// secrets, is uniform for both (chi-square, 255 dof, p = 0.001 cut-off 330.5).
TEST(SecretRecoveryTest, ShareValuesAreIndependentOfTheSecret) {
  random::Csprng rng = random::Csprng::FromSeed(6);
  const std::vector<uint8_t> zeros(32, 0), ones(32, 0xff);
  constexpr int kSplits = 25600;
  for (const auto* secret : {&zeros, &ones}) {
    std::array<int, 256> hist{};
    for (int i = 0; i < kSplits; ++i) {
      ASSERT_OK_AND_ASSIGN(auto shares, crypto::ShamirSplit(*secret, 3, 3, rng));
      ++hist[(shares)[0].y[0]];
    }
    const double expected = kSplits / 256.0;
    double chi2 = 0;
    for (int h : hist) chi2 += (h - expected) * (h - expected) / expected;
    EXPECT_LT(chi2, 330.5);
  }
}

}  // namespace
}  // namespace fedmf::secagg
