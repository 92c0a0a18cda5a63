#include "common/lfl/two_round_dp.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/dp/noise.h"
#include "common/lfl/secagg_sum.h"
#include "common/lfl/secure_sum.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::lfl {
namespace {

TEST(TwoRoundDpTest, SkipRuleAndVariances) {
  TwoRoundParams p{10, 0.3, 2.0};
  ASSERT_THAT(ValidateTwoRoundParams(p), IsOk());
  EXPECT_EQ(MinSurvivors(p), 7);
  EXPECT_DOUBLE_EQ(Round1Variance(p), 4.0 / 7.0);
  EXPECT_DOUBLE_EQ(Round2Variance(p, 8), 4.0 / 8.0);
  EXPECT_DOUBLE_EQ(RemainingVariance(p, 8, 8), 4.0);
  EXPECT_THAT(ValidateTwoRoundParams({0, 0.3, 1}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateTwoRoundParams({10, 1.0, 1}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateTwoRoundParams({10, 0.3, NAN}), StatusIs(absl::StatusCode::kInvalidArgument));
}

// The noise left after one iteration whose two rounds go through `sum`
// (IdealSum or the real secure aggregation). The gradients are zero, so the
// aggregate IS the remaining noise; each device's vector has many entries,
// giving many i.i.d. samples of the per-entry noise in one run.
//
// Dropouts: d1 devices miss round 1 (vanishing before their masked input,
// at each of the three boundaries in turn); d2 of the round-1 survivors
// miss round 2 — as many as round 1 can afford vanish after their round-1
// masked input (in U1, absent from round 2), the rest before their round-2
// masked input. When room is left, one more device vanishes after its
// round-2 masked input (still in U2). Round 2 aborts (U2 = {}) when fewer
// than ceil((1 - omega) |round-2 roster|) remain.
struct IterationNoise {
  std::vector<double> aggregate;
  int64_t u1 = 0, u2 = 0, expected_u2 = 0;
};

constexpr DropPoint kBeforeInput[] = {DropPoint::kBeforeAdvertise, DropPoint::kAfterAdvertise,
                                      DropPoint::kAfterShareKeys};
constexpr DropPoint kAfterInput[] = {DropPoint::kAfterMaskedInput, DropPoint::kDuringUnmasking};

IterationNoise RemainingNoise(const TwoRoundParams& p, int d1, int d2, size_t len, uint64_t seed,
                              const SecureSumFn& sum, const LflCodecs& codecs) {
  random::Csprng root = random::Csprng::FromSeed(seed);
  const int64_t n = p.num_devices;
  const int64_t m1 = MinSurvivors(p);
  const int64_t a1 = std::min<int64_t>(d2, n - d1 - m1);  // gone right after round 1
  std::vector<DeviceNoise> devices;
  devices.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) devices.emplace_back(p);
  std::vector<random::Csprng> rngs;
  SecureSumRequest r1{0, 1, m1, &codecs.round1, {}, 0, {}, {}};
  std::vector<const std::vector<double>*> x1_of;
  std::vector<std::vector<double>> x(n);
  for (int64_t i = 0; i < n; ++i) {
    rngs.push_back(root.Fork(absl::StrCat("device-", i)));
    const DropPoint d = i < d1        ? kBeforeInput[i % 3]
                        : i < d1 + a1 ? kAfterInput[i % 2]
                                      : DropPoint::kNone;
    r1.drops.push_back(d);
    if (Submits(d)) {
      x[i].assign(len, 0.0);
      devices[i].AddRound1Noise(x[i], rngs[i]);
    }
    x1_of.push_back(Submits(d) ? &x[i] : nullptr);
  }
  UseInputVectors(r1, x1_of);
  IterationNoise out;
  auto agg1 = sum(r1);
  EXPECT_THAT(agg1, IsOk());
  EXPECT_FALSE(agg1->aborted) << agg1->abort_reason;
  out.aggregate = agg1->sum;
  out.u1 = static_cast<int64_t>(agg1->included.size());

  const int64_t roster2 = n - d1 - a1;
  const int64_t b2 = d2 - a1;  // miss round 2 before their input
  const int64_t m2 = MinSurvivors({roster2, p.omega, p.sigma_v});
  const int64_t c2 = roster2 - b2 - 1 >= m2 ? 1 : 0;  // in U2, then gone
  SecureSumRequest r2{0, 2, m2, &codecs.round2, {}, 0, {}, {}};
  std::vector<const std::vector<double>*> x2_of;
  std::vector<std::vector<double>> bars(roster2);
  for (int64_t k = 0; k < roster2; ++k) {
    const int64_t i = d1 + a1 + k;
    const DropPoint d = k < b2        ? kBeforeInput[k % 3]
                        : k < b2 + c2 ? DropPoint::kAfterMaskedInput
                                      : DropPoint::kNone;
    r2.drops.push_back(d);
    if (Submits(d)) {
      auto bar = devices[i].Round2Replacement(out.u1, rngs[i]);
      EXPECT_THAT(bar, IsOk());
      bars[k] = *bar;
    }
    x2_of.push_back(Submits(d) ? &bars[k] : nullptr);
  }
  UseInputVectors(r2, x2_of);
  auto agg2 = sum(r2);
  EXPECT_THAT(agg2, IsOk());
  out.expected_u2 = roster2 - b2 - c2 >= m2 ? roster2 - b2 : 0;
  EXPECT_EQ(agg2->aborted, out.expected_u2 == 0) << agg2->abort_reason;
  if (!agg2->aborted) {
    out.u2 = static_cast<int64_t>(agg2->included.size());
    for (size_t k = 0; k < len; ++k) out.aggregate[k] += agg2->sum[k];
  }
  return out;
}

void ExpectRemainingNoiseAtLeastSigmaSquared(const SecureSumFn& sum, size_t len) {
  const TwoRoundParams p{20, 0.3, 1.5};
  const int max_drop = static_cast<int>(p.num_devices - MinSurvivors(p));  // omega * n = 6
  ASSERT_EQ(max_drop, 6);
  ASSERT_OK_AND_ASSIGN(auto codecs, ChooseLflCodecs(p, 5.0));
  for (int d1 = 0; d1 <= max_drop; d1 += 2) {
    for (int d2 = 0; d2 <= max_drop; d2 += 2) {
      IterationNoise it = RemainingNoise(p, d1, d2, len, 100 + d1 * 10 + d2, sum, codecs);
      ASSERT_EQ(it.aggregate.size(), len);
      EXPECT_EQ(it.u1, p.num_devices - d1);
      EXPECT_EQ(it.u2, it.expected_u2) << "d1=" << d1 << " d2=" << d2;
      double mean = 0, var = 0;
      for (double v : it.aggregate) mean += v;
      mean /= len;
      for (double v : it.aggregate) var += (v - mean) * (v - mean);
      var /= (len - 1);
      const double analytic = RemainingVariance(p, it.u1, it.u2);
      EXPECT_GE(analytic, p.sigma_v * p.sigma_v - 1e-12) << d1 << "," << d2;
      // Sampling error of a variance estimate over 6000 samples is ~1.8%.
      EXPECT_NEAR(var / analytic, 1.0, 0.08) << "d1=" << d1 << " d2=" << d2;
      EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(analytic / len));
    }
  }
}

TEST(TwoRoundDpTest, RemainingNoiseIsAtLeastSigmaSquaredForEveryDropoutPattern) {
  ExpectRemainingNoiseAtLeastSigmaSquared(IdealSum, 6000);
}

// The same through the real protocol: drops at every phase boundary of both
// aggregations, round-2 aborts included (d1 = 6, d2 >= 6).
TEST(TwoRoundDpTest, RemainingNoiseThroughSecureAggregation) {
  for (secagg::GraphKind g : {secagg::GraphKind::kComplete, secagg::GraphKind::kHarary}) {
    SecAggSumOptions o;
    o.graph = g;
    o.requirements.dropout_rate = 0.3;
    ExpectRemainingNoiseAtLeastSigmaSquared(MakeSecAggSum(o, random::Csprng::FromSeed(9)), 6000);
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
  ASSERT_OK_AND_ASSIGN(auto ok, d.Round2Replacement(8, rng));
  // -xi + xi': adding it to the round-1 vector removes xi exactly.
  for (size_t k = 0; k < x.size(); ++k) EXPECT_NE((ok)[k] + x[k], x[k]);
  EXPECT_EQ(d.Round2Replacement(8, rng).status().code(), absl::StatusCode::kFailedPrecondition);
}

// The device keeps a replica of its noise stream instead of xi_i, and round 2
// regenerates xi_i from it: the values are exactly those of the law — round 1
// adds the stream's next m clamped N(0, zeta1 sigma^2) draws, round 2 returns
// the following m draws of N(0, zeta2 sigma^2) minus the first — even when
// the caller's stream is used for other draws in between.
TEST(TwoRoundDpTest, RoundTwoCancelsExactlyTheNoiseRoundOneAdded) {
  const TwoRoundParams p{10, 0.3, 2.5};
  const size_t len = 5000;  // more than one 4 KiB keystream buffer of doubles
  random::Csprng rng = random::Csprng::FromSeed(11);
  random::Csprng reference = rng.Replica();
  const auto clamped = [](random::Csprng& r, double variance, size_t n) {
    std::vector<double> x(n);
    dp::FillGaussian(r, std::sqrt(variance), x.data(), n);
    const double limit = kNoiseTailSigmas * std::sqrt(variance);
    for (double& v : x) v = std::clamp(v, -limit, limit);
    return x;
  };
  DeviceNoise device(p);
  std::vector<double> x(len, 0.0);
  device.AddRound1Noise(x, rng);
  const std::vector<double> xi = clamped(reference, Round1Variance(p), len);
  EXPECT_EQ(x, xi);
  // Other draws from the caller's stream between the rounds.
  for (int k = 0; k < 3; ++k) EXPECT_EQ(rng.NextU64(), reference.NextU64());
  ASSERT_OK_AND_ASSIGN(auto replacement, device.Round2Replacement(8, rng));
  const std::vector<double> xi2 = clamped(reference, Round2Variance(p, 8), len);
  ASSERT_EQ(replacement.size(), len);
  for (size_t k = 0; k < len; ++k) ASSERT_EQ((replacement)[k], xi2[k] - xi[k]) << k;
}

}  // namespace
}  // namespace fedmf::lfl
