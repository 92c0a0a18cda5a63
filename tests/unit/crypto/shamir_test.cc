#include "common/crypto/shamir.h"

#include <algorithm>
#include <vector>

#include "common/crypto/gf127.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::crypto {
namespace {

std::vector<uint8_t> RandomBytes(random::Csprng& rng, size_t n) {
  std::vector<uint8_t> out(n);
  rng.FillBytes(out.data(), n);
  return out;
}

bool Equals(const SecretBytes& s, const std::vector<uint8_t>& v) {
  return ConstantTimeEquals(s.span(), v);
}

// Calls f on every k-subset (in index order) of {0..n-1}.
template <typename F>
void ForEachSubset(size_t n, size_t k, F f) {
  std::vector<bool> pick(n, false);
  std::fill(pick.begin(), pick.begin() + k, true);
  do {
    std::vector<size_t> idx;
    for (size_t i = 0; i < n; ++i)
      if (pick[i]) idx.push_back(i);
    f(idx);
  } while (std::prev_permutation(pick.begin(), pick.end()));
}

TEST(ShamirTest, EveryThresholdSubsetReconstructsForSmallN) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  const auto secret = RandomBytes(rng, 32);
  for (size_t n = 1; n <= 6; ++n) {
    for (size_t t = 1; t <= n; ++t) {
      ASSERT_OK_AND_ASSIGN(auto shares, ShamirSplit(secret, t, n, rng));
      ASSERT_EQ(shares.size(), n);
      for (size_t i = 0; i < n; ++i) EXPECT_EQ((shares)[i].x, i + 1);
      // Every subset of size >= t, also in reverse order.
      for (size_t k = t; k <= n; ++k) {
        ForEachSubset(n, k, [&](const std::vector<size_t>& idx) {
          std::vector<ShamirShare> subset;
          for (size_t i : idx) subset.push_back((shares)[i]);
          auto got = ShamirReconstruct(subset, t);
          ASSERT_THAT(got, IsOk());
          EXPECT_TRUE(Equals(*got, secret)) << "n=" << n << " t=" << t << " k=" << k;
          std::reverse(subset.begin(), subset.end());
          got = ShamirReconstruct(subset, t);
          ASSERT_THAT(got, IsOk());
          EXPECT_TRUE(Equals(*got, secret));
        });
      }
    }
  }
}

TEST(ShamirTest, RandomParametersAndSecretSizesRoundTrip) {
  random::Csprng rng = random::Csprng::FromSeed(2);
  for (size_t size : {1, 14, 15, 16, 29, 30, 31, 32, 45, 100, 1000}) {
    for (int trial = 0; trial < 5; ++trial) {
      const size_t n = 1 + rng.UniformInt(60);
      const size_t t = 1 + rng.UniformInt(n);
      const auto secret = RandomBytes(rng, size);
      ASSERT_OK_AND_ASSIGN(auto shares, ShamirSplit(secret, t, n, rng));
      for (const ShamirShare& s : shares) {
        ASSERT_EQ(s.secret_size, size);
        ASSERT_EQ(s.y.size(), ShamirChunkCount(size) * kShamirElementBytes);
      }
      std::shuffle(shares.begin(), shares.end(), rng);
      shares.resize(t + rng.UniformInt(n - t + 1));  // a random set of >= t
      ASSERT_OK_AND_ASSIGN(auto got, ShamirReconstruct(shares, t));
      EXPECT_TRUE(Equals(got, secret)) << "size=" << size << " n=" << n << " t=" << t;
    }
  }
}

TEST(ShamirTest, SplittingIsDeterministicUnderASeed) {
  const std::vector<uint8_t> secret(32, 0xab);
  random::Csprng r1 = random::Csprng::FromSeed(3), r2 = random::Csprng::FromSeed(3);
  auto a = ShamirSplit(secret, 3, 5, r1);
  auto b = ShamirSplit(secret, 3, 5, r2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  auto c = ShamirSplit(secret, 3, 5, r1);  // fresh randomness
  ASSERT_THAT(c, IsOk());
  EXPECT_NE((*a)[0].y, (*c)[0].y);
}

// Privacy: t-1 shares are consistent with EVERY secret. For the t-1 shares of
// secret A and an arbitrary secret B, the polynomial through those shares and
// (0, B) exists; its value at a fresh x is a t-th share that, together with
// the real t-1 shares, reconstructs B. So the t-1 shares cannot tell A from B.
TEST(ShamirTest, ThresholdMinusOneSharesAreConsistentWithAnySecret) {
  random::Csprng rng = random::Csprng::FromSeed(4);
  for (size_t t : {2, 3, 5, 8}) {
    const size_t n = t + 2;
    const auto secret_a = RandomBytes(rng, 32);
    auto shares = ShamirSplit(secret_a, t, n, rng);
    ASSERT_THAT(shares, IsOk());
    const std::vector<ShamirShare> known(shares->begin(), shares->begin() + (t - 1));

    for (int trial = 0; trial < 4; ++trial) {
      const std::vector<uint8_t> secret_b =
          trial == 0 ? secret_a : (trial == 1 ? std::vector<uint8_t>(32, 0) : RandomBytes(rng, 32));
      ShamirShare forged;
      forged.x = static_cast<uint32_t>(n);  // an x the t-1 known shares do not use
      forged.secret_size = 32;
      forged.y.resize(ShamirChunkCount(32) * kShamirElementBytes);
      for (size_t c = 0; c < ShamirChunkCount(32); ++c) {
        std::vector<gf127::Elem> xs, ys;
        for (const ShamirShare& s : known) {
          xs.push_back(s.x);
          ys.push_back(gf127::Load(s.y.data() + c * kShamirElementBytes));
        }
        // The chosen point at x = 0: chunk c of secret B.
        gf127::Elem chunk = 0;
        const size_t begin = c * kShamirChunkBytes;
        const size_t end = std::min<size_t>(32, begin + kShamirChunkBytes);
        for (size_t i = end; i-- > begin;) chunk = (chunk << 8) | secret_b[i];
        xs.push_back(0);
        ys.push_back(chunk);
        ASSERT_OK_AND_ASSIGN(auto y, gf127::InterpolateAt(xs, ys, forged.x));
        gf127::Store(y, forged.y.data() + c * kShamirElementBytes);
      }
      std::vector<ShamirShare> set = known;
      set.push_back(forged);
      ASSERT_OK_AND_ASSIGN(auto got, ShamirReconstruct(set, t));
      EXPECT_TRUE(Equals(got, secret_b)) << "t=" << t << " trial=" << trial;
    }
  }
}

TEST(ShamirTest, FewerThanThresholdSharesIsAnError) {
  random::Csprng rng = random::Csprng::FromSeed(5);
  ASSERT_OK_AND_ASSIGN(auto shares, ShamirSplit(std::vector<uint8_t>(32, 1), 4, 6, rng));
  std::vector<ShamirShare> three(shares.begin(), shares.begin() + 3);
  EXPECT_EQ(ShamirReconstruct(three, 4).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShamirReconstruct({}, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShamirReconstruct(shares, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ShamirTest, RejectsMalformedShareSets) {
  random::Csprng rng = random::Csprng::FromSeed(6);
  ASSERT_OK_AND_ASSIGN(auto shares, ShamirSplit(std::vector<uint8_t>(32, 2), 3, 5, rng));
  const auto code = [](const std::vector<ShamirShare>& s, size_t t) {
    return ShamirReconstruct(s, t).status().code();
  };
  auto dup = shares;
  dup[2].x = dup[0].x;
  EXPECT_EQ(code(dup, 3), absl::StatusCode::kInvalidArgument);
  auto dup_late = shares;  // duplicates beyond the first t are caught too
  dup_late[4].x = dup_late[3].x;
  EXPECT_EQ(code(dup_late, 3), absl::StatusCode::kInvalidArgument);
  auto zero = shares;
  zero[1].x = 0;
  EXPECT_EQ(code(zero, 3), absl::StatusCode::kInvalidArgument);
  auto sizes = shares;
  sizes[1].secret_size = 31;  // same y length (3 chunks), different secret
  EXPECT_EQ(code(sizes, 3), absl::StatusCode::kInvalidArgument);
  auto short_y = shares;
  short_y[0].y.pop_back();
  EXPECT_EQ(code(short_y, 3), absl::StatusCode::kInvalidArgument);
  auto big = shares;
  std::fill(big[0].y.begin(), big[0].y.begin() + 16, 0xff);  // 2^128 - 1 >= p
  EXPECT_EQ(code(big, 3), absl::StatusCode::kInvalidArgument);
  auto not_canonical = shares;  // exactly p
  std::fill(not_canonical[0].y.begin(), not_canonical[0].y.begin() + 16, 0xff);
  not_canonical[0].y[15] = 0x7f;
  EXPECT_EQ(code(not_canonical, 3), absl::StatusCode::kInvalidArgument);
}

TEST(ShamirTest, CorruptedShareIsNotSilentlyAccepted) {
  random::Csprng rng = random::Csprng::FromSeed(7);
  const std::vector<uint8_t> secret(32, 3);
  ASSERT_OK_AND_ASSIGN(auto shares, ShamirSplit(secret, 3, 5, rng));
  (shares)[1].y[3] ^= 0x10;
  auto got = ShamirReconstruct(shares, 3);
  // Detected with probability ~1 - 2^-7 per chunk; either way never the secret.
  if (got.ok()) {
    EXPECT_FALSE(Equals(*got, secret));
  } else {
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(ShamirTest, RejectsBadSplitArguments) {
  random::Csprng rng = random::Csprng::FromSeed(8);
  const std::vector<uint8_t> secret(32, 4);
  EXPECT_THAT(ShamirSplit({}, 1, 1, rng), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ShamirSplit(std::vector<uint8_t>(kShamirMaxSecretBytes + 1), 1, 1, rng),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ShamirSplit(secret, 0, 3, rng), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ShamirSplit(secret, 4, 3, rng), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ShamirSplit(secret, 1, 0, rng), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ShamirSplit(secret, 1, kShamirMaxShares + 1, rng),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ShamirTest, SerializationRoundTripsAndValidates) {
  random::Csprng rng = random::Csprng::FromSeed(9);
  ASSERT_OK_AND_ASSIGN(auto shares, ShamirSplit(std::vector<uint8_t>(32, 5), 2, 3, rng));
  for (const ShamirShare& s : shares) {
    const auto wire = SerializeShamirShare(s);
    EXPECT_EQ(wire.size(), kShamirShareHeaderBytes + 48);
    ASSERT_OK_AND_ASSIGN(auto back, ParseShamirShare(wire));
    EXPECT_EQ(back, s);
  }
  auto wire = SerializeShamirShare((shares)[0]);
  EXPECT_THAT(ParseShamirShare(std::span(wire).first(7)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseShamirShare(std::span(wire).first(wire.size() - 1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  auto zero_x = wire;
  zero_x[0] = 0;
  EXPECT_THAT(ParseShamirShare(zero_x), StatusIs(absl::StatusCode::kInvalidArgument));
  auto huge = wire;
  huge[7] = 0xff;  // secret_size ~ 4 GiB
  EXPECT_THAT(ParseShamirShare(huge), StatusIs(absl::StatusCode::kInvalidArgument));
  auto no_secret = wire;
  no_secret[4] = no_secret[5] = no_secret[6] = no_secret[7] = 0;
  EXPECT_THAT(ParseShamirShare(no_secret), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::crypto
