#include "common/lfl/two_round_dp.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fedmf::lfl {
namespace {

TEST(TwoRoundDpTest, SkipRuleAndVariances) {
  TwoRoundParams p{10, 0.3, 2.0};
  ASSERT_TRUE(ValidateTwoRoundParams(p).ok());
  EXPECT_EQ(MinSurvivors(p), 7);
  EXPECT_DOUBLE_EQ(Round1Variance(p), 4.0 / 7.0);
  EXPECT_DOUBLE_EQ(Round2Variance(p, 8), 4.0 / 8.0);
  EXPECT_DOUBLE_EQ(RemainingVariance(p, 8, 8), 4.0);
  EXPECT_FALSE(ValidateTwoRoundParams({0, 0.3, 1}).ok());
  EXPECT_FALSE(ValidateTwoRoundParams({10, 1.0, 1}).ok());
  EXPECT_FALSE(ValidateTwoRoundParams({10, 0.3, NAN}).ok());
}

// Simulates the noise of one iteration with d1 devices dropping in round 1
// and d2 of the survivors dropping in round 2; the gradients are zero so the
// aggregate IS the remaining noise. Each device's vector has many entries,
// giving many i.i.d. samples of the per-entry noise in one run.
std::vector<double> RemainingNoise(const TwoRoundParams& p, int d1, int d2, size_t len,
                                   uint64_t seed) {
  random::Csprng root = random::Csprng::FromSeed(seed);
  const int64_t n = p.num_devices;
  std::vector<DeviceNoise> devices(n, DeviceNoise(p));
  std::vector<double> aggregate(len, 0.0);
  const int64_t u1 = n - d1;
  for (int64_t i = 0; i < n; ++i) {
    random::Csprng rng = root.Fork(absl::StrCat("device-", i));
    std::vector<double> x(len, 0.0);
    devices[i].AddRound1Noise(x, rng);
    if (i < d1) continue;  // dropped in round 1: its masked input never counted
    for (size_t k = 0; k < len; ++k) aggregate[k] += x[k];
    if (i < d1 + d2) continue;  // survived round 1, dropped in round 2
    auto bar = devices[i].Round2Replacement(u1, rng);
    EXPECT_TRUE(bar.ok()) << bar.status();
    for (size_t k = 0; k < len; ++k) aggregate[k] += (*bar)[k];
  }
  return aggregate;
}

TEST(TwoRoundDpTest, RemainingNoiseIsAtLeastSigmaSquaredForEveryDropoutPattern) {
  const TwoRoundParams p{20, 0.3, 1.5};
  const int max_drop = static_cast<int>(p.num_devices - MinSurvivors(p));  // omega * n = 6
  ASSERT_EQ(max_drop, 6);
  const size_t len = 6000;
  for (int d1 = 0; d1 <= max_drop; d1 += 2) {
    for (int d2 = 0; d2 <= max_drop; d2 += 2) {
      std::vector<double> agg = RemainingNoise(p, d1, d2, len, 100 + d1 * 10 + d2);
      double mean = 0, var = 0;
      for (double v : agg) mean += v;
      mean /= len;
      for (double v : agg) var += (v - mean) * (v - mean);
      var /= (len - 1);
      const double analytic = RemainingVariance(p, p.num_devices - d1, p.num_devices - d1 - d2);
      EXPECT_GE(analytic, p.sigma_v * p.sigma_v - 1e-12) << d1 << "," << d2;
      // Sampling error of a variance estimate over 6000 samples is ~1.8%.
      EXPECT_NEAR(var / analytic, 1.0, 0.08) << "d1=" << d1 << " d2=" << d2;
      EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(analytic / len));
    }
  }
}

TEST(TwoRoundDpTest, DeviceRefusesImpossibleAnnouncementsAndRepeats) {
  TwoRoundParams p{10, 0.3, 1.0};
  DeviceNoise d(p);
  random::Csprng rng = random::Csprng::FromSeed(1);
  EXPECT_EQ(d.Round2Replacement(9, rng).status().code(), absl::StatusCode::kFailedPrecondition);
  std::vector<double> x(5, 0.0);
  d.AddRound1Noise(x, rng);
  // A server claiming only 6 survivors (< 7) would get too little noise back.
  EXPECT_EQ(d.Round2Replacement(6, rng).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.Round2Replacement(11, rng).status().code(), absl::StatusCode::kInvalidArgument);
  auto ok = d.Round2Replacement(8, rng);
  ASSERT_TRUE(ok.ok());
  // -xi + xi': adding it to the round-1 vector removes xi exactly.
  for (size_t k = 0; k < x.size(); ++k) EXPECT_NE((*ok)[k] + x[k], x[k]);
  EXPECT_EQ(d.Round2Replacement(8, rng).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace fedmf::lfl
