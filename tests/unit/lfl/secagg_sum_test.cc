#include "common/lfl/secagg_sum.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/mod2k.h"
#include "common/data/synthetic.h"
#include "common/lfl/lfl_device.h"
#include "common/lfl/lfl_simulator.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::lfl {
namespace {

using secagg::GraphKind;

SecureSumFn SecAgg(GraphKind graph, uint64_t seed, double omega = 0.3) {
  SecAggSumOptions o;
  o.graph = graph;
  o.requirements.dropout_rate = omega;
  return MakeSecAggSum(o, random::Csprng::FromSeed(seed));
}

TEST(LflCodecTest, MaximalPrecisionWithoutWrap) {
  // ML-100K-sized federation at epsilon = 1.
  const TwoRoundParams dp{943, 0.3, 270.0};
  ASSERT_OK_AND_ASSIGN(auto codecs, ChooseLflCodecs(dp, 5.0, 64));
  for (const auto* c : {&codecs.round1, &codecs.round2}) {
    EXPECT_EQ(c->bits(), 64);
    EXPECT_EQ(c->max_summands(), 943u);
    // No wrap at f, a wrap would be possible at f + 1: f is the best there is.
    const long double limit = std::ldexp(1.0L, 63);
    EXPECT_LT(943.0L * c->max_encoded_magnitude(), limit);
    EXPECT_GE(
        943.0L * std::ceil(std::ldexp(static_cast<long double>(c->max_abs()), c->frac_bits() + 1)),
        limit);
  }
  EXPECT_DOUBLE_EQ(codecs.round1.max_abs(), Round1Bound(5.0, dp, kNoiseTailSigmas));
  EXPECT_DOUBLE_EQ(codecs.round2.max_abs(), Round2Bound(dp, kNoiseTailSigmas));
  // sqrt(zeta1) sigma_v = 270 / sqrt(0.7 * 943); the gradient part is 2 * 5^1.5.
  EXPECT_NEAR(codecs.round1.max_abs(), 2 * std::pow(5.0, 1.5) + 10 * 270 / std::sqrt(660.1), 1e-9);
  // The clamp of DeviceNoise keeps every draw encodable, even a wild one.
  EXPECT_THAT(codecs.round1.Encode(codecs.round1.max_abs()), IsOk());
  EXPECT_THAT(codecs.round1.Encode(codecs.round1.max_abs() * 1.001),
              StatusIs(absl::StatusCode::kInvalidArgument));

  // Fewer bits: less precision, still no wrap; too few: a clear error.
  auto narrow = ChooseLflCodecs(dp, 5.0);  // kDefaultLflBits = 32
  ASSERT_THAT(narrow, IsOk());
  EXPECT_EQ(narrow->round1.bits(), 32);
  EXPECT_NEAR(narrow->round1.frac_bits(), codecs.round1.frac_bits() - 32, 1);
  auto none = ChooseLflCodecs(dp, 5.0, 12);
  ASSERT_THAT(none, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(none.status().message().find("round 1"), std::string::npos) << none.status();
  // No noise at all (epsilon = inf): round 2 carries zeros, any bound works.
  EXPECT_THAT(ChooseLflCodecs({943, 0.3, 0.0}, 5.0), IsOk());
}

TEST(LflCodecTest, DeviceNoiseIsClampedAtTheTail) {
  // A huge vector makes a few 4-sigma draws certain; none exceeds 10 sigma.
  const TwoRoundParams dp{10, 0.3, 3.0};
  DeviceNoise noise(dp);
  random::Csprng rng = random::Csprng::FromSeed(3);
  std::vector<double> x(200000, 0.0);
  noise.AddRound1Noise(x, rng);
  const double s1 = std::sqrt(Round1Variance(dp));
  double biggest = 0;
  for (double v : x) biggest = std::max(biggest, std::abs(v));
  EXPECT_GT(biggest, 4 * s1);
  EXPECT_LE(biggest, kNoiseTailSigmas * s1);
  ASSERT_OK_AND_ASSIGN(auto bar, noise.Round2Replacement(7, rng));
  for (double v : bar) ASSERT_LE(std::abs(v), Round2Bound(dp, kNoiseTailSigmas));
}

// Random inputs in [-B, B], random drop points at every boundary: the secure
// sum decodes to exactly the fixed-point sum of the rounded inputs of the
// devices in U3, and aborts exactly when IdealSum does (complete graph).
TEST(SecAggSumTest, DecodedSumIsTheExactFixedPointSumAndAbortsLikeIdealSum) {
  random::Csprng rng = random::Csprng::FromSeed(17);
  int completed = 0, aborted = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const size_t n = 5 + rng.UniformInt(26);
    const size_t len = 1 + rng.UniformInt(40);
    const double bound = 0.5 + 100 * rng.NextDouble();
    ASSERT_OK_AND_ASSIGN(auto codec, MaxPrecisionCodec(trial % 2 ? 64 : 40, bound, n));
    SecureSumRequest r;
    r.iteration = trial;
    r.codec = &codec;
    r.min_survivors = static_cast<int64_t>(std::ceil(0.7 * n - 1e-9));
    std::vector<std::vector<double>> x(n);
    std::vector<const std::vector<double>*> inputs;
    // Drop probability around the threshold so both outcomes occur.
    const double p = 0.1 + 0.4 * rng.NextDouble();
    for (size_t k = 0; k < n; ++k) {
      r.drops.push_back(SampleDropPoint(rng, p));
      x[k].resize(len);
      for (double& v : x[k]) v = bound * (2 * rng.NextDouble() - 1);
      inputs.push_back(Submits(r.drops[k]) ? &x[k] : nullptr);
    }
    UseInputVectors(r, inputs);
    r.length = len;  // also when nobody submits
    ASSERT_OK_AND_ASSIGN(auto ideal, IdealSum(r));
    ASSERT_OK_AND_ASSIGN(auto secure, SecAgg(GraphKind::kComplete, 100 + trial)(r));
    ASSERT_EQ(secure.aborted, ideal.aborted) << "trial " << trial << ": " << secure.abort_reason;
    EXPECT_EQ(secure.cost.aggregations, 1);
    if (secure.aborted) {
      ++aborted;
      EXPECT_TRUE(secure.sum.empty());
      continue;
    }
    ++completed;
    ASSERT_EQ(secure.included, ideal.included);
    std::vector<uint64_t> expected(len, 0);
    for (size_t k : ideal.included) {
      ASSERT_OK_AND_ASSIGN(auto e, codec.EncodeVector(x[k]));
      ASSERT_THAT(crypto::AddMod2k(expected, e, codec.bits()), IsOk());
    }
    ASSERT_EQ(secure.sum.size(), len);
    // Rounding of the encodings, plus the double rounding of IdealSum itself.
    const double precision =
        static_cast<double>(n) * std::ldexp(1.0, -codec.frac_bits() - 1) + 1e-11;
    for (size_t e = 0; e < len; ++e) {
      EXPECT_EQ(secure.sum[e], codec.DecodeSum(expected[e])) << "trial " << trial << " e " << e;
      EXPECT_NEAR(secure.sum[e], ideal.sum[e], precision);
    }
  }
  EXPECT_GT(completed, 4);
  EXPECT_GT(aborted, 2);
}

// The skip rule at its edge, in both graph modes and at every boundary: with
// exactly ceil((1 - omega) n) devices left the sum is decoded, with one fewer
// the aggregation aborts and the server gets nothing.
TEST(SecAggSumTest, AbortsExactlyBelowOneMinusOmegaN) {
  const size_t len = 6;
  for (GraphKind g : {GraphKind::kComplete, GraphKind::kHarary}) {
    // The complete graph costs n^2 key agreements: keep its n small.
    for (size_t n : {size_t{10}, g == GraphKind::kComplete ? size_t{40} : size_t{120}}) {
      const int64_t m = MinSurvivors({static_cast<int64_t>(n), 0.3, 1.0});
      ASSERT_OK_AND_ASSIGN(auto codec, MaxPrecisionCodec(64, 10.0, n));
      std::vector<std::vector<double>> x(n, std::vector<double>(len, 1.25));
      for (int at = 0; at < kNumDropPoints; ++at) {
        for (int64_t dropped : {static_cast<int64_t>(n) - m, static_cast<int64_t>(n) - m + 1}) {
          SecureSumRequest r;
          r.codec = &codec;
          r.min_survivors = m;
          std::vector<const std::vector<double>*> inputs;
          for (size_t k = 0; k < n; ++k) {
            r.drops.push_back(static_cast<int64_t>(k) < dropped ? static_cast<DropPoint>(at)
                                                                : DropPoint::kNone);
            inputs.push_back(Submits(r.drops.back()) ? &x[k] : nullptr);
          }
          UseInputVectors(r, inputs);
          ASSERT_OK_AND_ASSIGN(auto out, SecAgg(g, 7 * n + at)(r));
          const bool should_abort = static_cast<int64_t>(n) - dropped < m;
          ASSERT_EQ(out.aborted, should_abort)
              << AggregationName(g) << " n=" << n << " at=" << at << " dropped=" << dropped << ": "
              << out.abort_reason;
          if (should_abort) continue;
          const size_t in_sum = Submits(static_cast<DropPoint>(at)) ? n : n - dropped;
          EXPECT_EQ(out.included.size(), in_sum);
          for (double v : out.sum) EXPECT_EQ(v, 1.25 * static_cast<double>(in_sum));
        }
      }
    }
  }
}

// Inputs are computed on demand (SecureSumRequest::input): each participant
// that gets as far as its masked input is asked exactly once, in the
// aggregation's worker threads; one that vanishes earlier is never asked.
TEST(SecAggSumTest, AsksEachSubmitterForItsInputOnceAndNobodyElse) {
  constexpr size_t kN = 30;
  ASSERT_OK_AND_ASSIGN(auto codec, MaxPrecisionCodec(32, 2.0, kN));
  SecureSumRequest r;
  r.codec = &codec;
  r.min_survivors = 20;  // 6 vanish before their input, 4 after it
  for (size_t k = 0; k < kN; ++k) {
    r.drops.push_back(k % 5 == 0   ? DropPoint::kAfterShareKeys
                      : k % 7 == 0 ? DropPoint::kAfterMaskedInput
                                   : DropPoint::kNone);
  }
  r.length = 4;
  std::vector<std::atomic<int>> asked(kN);
  r.input = [&asked](size_t k) -> absl::StatusOr<std::vector<double>> {
    asked[k].fetch_add(1);
    return std::vector<double>(4, 0.5 * static_cast<double>(k % 3));
  };
  auto out = SecAgg(GraphKind::kHarary, 9)(r);
  ASSERT_THAT(out, IsOk());
  ASSERT_FALSE(out->aborted) << out->abort_reason;
  double expected = 0;
  for (size_t k = 0; k < kN; ++k) {
    EXPECT_EQ(asked[k].load(), Submits(r.drops[k]) ? 1 : 0) << "participant " << k;
    if (Submits(r.drops[k])) expected += 0.5 * static_cast<double>(k % 3);
  }
  EXPECT_EQ(out->sum, std::vector<double>(4, expected));
  // A failing input is reported with the participant and its cause.
  r.input = [](size_t k) -> absl::StatusOr<std::vector<double>> {
    if (k == 3) return absl::FailedPreconditionError("Round1 out of phase");
    return std::vector<double>(4, 0.0);
  };
  auto failed = SecAgg(GraphKind::kHarary, 10)(r);
  ASSERT_THAT(failed, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(failed.status().message().find("device 3"), std::string::npos) << failed.status();
  EXPECT_NE(failed.status().message().find("Round1 out of phase"), std::string::npos);
}

TEST(SecAggSumTest, RejectsMalformedRequests) {
  auto codec = MaxPrecisionCodec(64, 1.0, 4);
  ASSERT_THAT(codec, IsOk());
  std::vector<double> a(3, 0.5), b(4, 0.5), big(3, 2.0);
  auto sum = SecAgg(GraphKind::kComplete, 1);
  SecureSumRequest r;
  r.codec = &*codec;
  r.min_survivors = 2;
  r.drops.assign(3, DropPoint::kNone);
  UseInputVectors(r, {&a, &b, &a});  // lengths differ
  auto mismatched = sum(r);
  EXPECT_EQ(mismatched.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mismatched.status().message().find("input 1 has length 4, expected 3"),
            std::string::npos)
      << mismatched.status();
  UseInputVectors(r, {&a, nullptr, &a});  // a submitter without an input
  EXPECT_EQ(sum(r).status().code(), absl::StatusCode::kInvalidArgument);
  r.input = nullptr;  // submitters, and no input at all
  EXPECT_EQ(sum(r).status().code(), absl::StatusCode::kInvalidArgument);
  UseInputVectors(r, {&a, &big, &a});  // beyond the codec's bound: named, not wrapped
  auto out = sum(r);
  ASSERT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(out.status().message().find("device 1"), std::string::npos) << out.status();
  UseInputVectors(r, {&a, &a, &a});
  r.codec = nullptr;
  EXPECT_THAT(sum(r), StatusIs(absl::StatusCode::kInvalidArgument));
  // One participant: never aggregated (its "sum" would be its input).
  r.codec = &*codec;
  r.min_survivors = 1;
  UseInputVectors(r, {&a});
  r.drops = {DropPoint::kNone};
  ASSERT_OK_AND_ASSIGN(auto one, sum(r));
  EXPECT_TRUE(one.aborted);
}

// Fresh aggregation per call: the same request twice gives the same sum,
// but the server sees different masked traffic (new keys, new ids).
TEST(SecAggSumTest, EveryCallIsAFreshAggregation) {
  ASSERT_OK_AND_ASSIGN(auto codec, MaxPrecisionCodec(64, 4.0, 6));
  std::vector<std::vector<double>> x(6, std::vector<double>(5, -3.5));
  SecureSumRequest r;
  r.codec = &codec;
  r.min_survivors = 5;
  std::vector<const std::vector<double>*> inputs;
  for (auto& v : x) {
    inputs.push_back(&v);
    r.drops.push_back(DropPoint::kNone);
  }
  UseInputVectors(r, inputs);
  auto sum = SecAgg(GraphKind::kHarary, 5);
  auto first = sum(r);
  auto second = sum(r);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->sum, second->sum);
  EXPECT_EQ(first->sum, std::vector<double>(5, -21.0));
  EXPECT_GT(first->cost.upload_bytes, 6u * 5 * 8);
  EXPECT_GT(first->cost.client_seconds[0], 0);
}

// A session (SecAggSumOptions::session): the first call sets up, later
// calls — over subsets named by device_ids, with their own dropouts — decode
// exactly what IdealSum gives, and send no keys.
TEST(SecAggSumTest, SessionSumsMatchIdealSumOverSubsetsOfTheSetupsDevices) {
  constexpr size_t kN = 60;
  ASSERT_OK_AND_ASSIGN(auto codec, MaxPrecisionCodec(32, 8.0, kN));
  SecAggSumOptions o;
  o.session = true;
  SecureSumFn sum = MakeSecAggSum(o, random::Csprng::FromSeed(31));
  random::Csprng rng = random::Csprng::FromSeed(32);
  std::vector<std::vector<double>> x(kN, std::vector<double>(7));
  uint64_t setup_upload = 0;
  for (int call = 0; call < 5; ++call) {
    for (auto& v : x) {
      for (double& e : v) e = 8.0 * (2 * rng.NextDouble() - 1);
    }
    SecureSumRequest r;
    r.iteration = call;
    r.codec = &codec;
    // Call 0 (the setup): everybody; later: a random subset of 40..60.
    std::vector<int64_t> ids(kN);
    for (size_t k = 0; k < kN; ++k) ids[k] = static_cast<int64_t>(k);
    if (call > 0) {
      for (size_t k = kN - 1; k > 0; --k) std::swap(ids[k], ids[rng.UniformInt(k + 1)]);
      ids.resize(40 + rng.UniformInt(21));
      r.device_ids = ids;
    }
    r.min_survivors = static_cast<int64_t>(std::ceil(0.7 * ids.size() - 1e-9));
    std::vector<const std::vector<double>*> inputs;
    for (size_t k = 0; k < ids.size(); ++k) {
      // At the setup nobody may vanish before sharing (it would miss the
      // session); later anyone may, anywhere.
      DropPoint d = SampleDropPoint(rng, 0.15);
      if (call == 0 && d < DropPoint::kAfterShareKeys) d = DropPoint::kNone;
      r.drops.push_back(d);
      inputs.push_back(Submits(d) ? &x[static_cast<size_t>(ids[k])] : nullptr);
    }
    UseInputVectors(r, inputs);
    r.length = 7;  // also when nobody submits
    auto ideal = IdealSum(r);
    auto secure = sum(r);
    ASSERT_THAT(ideal, IsOk());
    ASSERT_THAT(secure, IsOk());
    ASSERT_FALSE(secure->aborted) << "call " << call << ": " << secure->abort_reason;
    ASSERT_EQ(secure->included, ideal->included) << "call " << call;
    const double precision =
        static_cast<double>(kN) * std::ldexp(1.0, -codec.frac_bits() - 1) + 1e-9;
    for (size_t e = 0; e < 7; ++e) EXPECT_NEAR(secure->sum[e], ideal->sum[e], precision);
    if (call == 0) {
      setup_upload = secure->cost.upload_bytes;
    } else if (ids.size() == kN) {
      EXPECT_LT(secure->cost.upload_bytes, setup_upload);
    }
  }
  // A participant that is not a session device is refused by name.
  std::vector<double> v(7, 0.0);
  SecureSumRequest bad;
  bad.codec = &codec;
  bad.min_survivors = 1;
  UseInputVectors(bad, {&v, &v});
  bad.drops = {DropPoint::kNone, DropPoint::kNone};
  bad.device_ids = {0, static_cast<int64_t>(kN)};
  auto refused = sum(bad);
  ASSERT_THAT(refused, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(refused.status().message().find("is not a distinct device"), std::string::npos)
      << refused.status();
}

// Devices that missed the setup sit out of a session until more of them
// than half the tolerated dropout, (n - min_survivors) / 2, are out: the
// next round-1 request then sets up anew, with everybody.
TEST(SecAggSumTest, SessionIsSetUpAnewOnceTooManyDevicesMissedTheSetup) {
  constexpr size_t kN = 40;
  ASSERT_OK_AND_ASSIGN(auto codec, MaxPrecisionCodec(32, 4.0, kN));
  std::vector<std::vector<double>> x(kN, std::vector<double>(3, 1.0));
  const auto request = [&](size_t missing_setup) {
    SecureSumRequest r;
    r.round = 1;
    r.codec = &codec;
    r.min_survivors = 28;  // ceil(0.7 * 40): tolerates 12, re-keys beyond 6 out
    std::vector<const std::vector<double>*> inputs;
    for (size_t k = 0; k < kN; ++k) {
      r.drops.push_back(k < missing_setup ? DropPoint::kBeforeAdvertise : DropPoint::kNone);
      inputs.push_back(k < missing_setup ? nullptr : &x[k]);
    }
    UseInputVectors(r, inputs);
    return r;
  };
  for (const auto& [missing, rekeyed] : {std::pair<size_t, bool>{6, false}, {7, true}}) {
    SecAggSumOptions o;
    o.session = true;
    SecureSumFn sum = MakeSecAggSum(o, random::Csprng::FromSeed(40 + missing));
    auto setup = sum(request(missing));
    ASSERT_THAT(setup, IsOk());
    ASSERT_FALSE(setup->aborted) << setup->abort_reason;
    EXPECT_EQ(setup->included.size(), kN - missing);
    auto next = sum(request(0));  // everybody is back
    ASSERT_THAT(next, IsOk());
    ASSERT_FALSE(next->aborted) << next->abort_reason;
    EXPECT_EQ(next->included.size(), rekeyed ? kN : kN - missing) << missing << " missed the setup";
    EXPECT_EQ(next->sum[0], static_cast<double>(next->included.size()));
  }
}

data::Dataset SmallSumData() {
  data::SyntheticOptions o;
  o.num_users = 80;
  o.num_items = 40;
  o.density = 0.2;
  auto d = data::GenerateSynthetic(o);
  EXPECT_THAT(d, IsOk());
  return *d;
}

// End to end: SimulateLfl over the secure aggregation reproduces the ideal
// run (same seed: same samples, noise and dropouts) up to fixed-point
// rounding, including skipped and dropped iterations.
TEST(SecAggSumTest, SimulateLflMatchesIdealSum) {
  for (GraphKind g : {GraphKind::kHarary, GraphKind::kComplete}) {
    LflConfig c;
    c.iterations = 4;
    c.dim = 5;
    c.epsilon = 4.0;
    c.seed = 11;
    c.dropout_round1 = 0.15;
    c.dropout_round2 = 0.15;
    c.device.pretrain_epochs = 5;
    c.device.finetune_epochs = 5;
    auto ideal = SimulateLfl(c, SmallSumData(), IdealSum);
    auto secure = SimulateLfl(c, SmallSumData(), SecAgg(g, 21));
    ASSERT_THAT(ideal, IsOk());
    ASSERT_THAT(secure, IsOk());
    EXPECT_EQ(secure->stage1_test.mse, ideal->stage1_test.mse);
    ASSERT_EQ(secure->iterations.size(), ideal->iterations.size());
    for (size_t t = 0; t < ideal->iterations.size(); ++t) {
      const auto& a = secure->iterations[t];
      const auto& b = ideal->iterations[t];
      EXPECT_EQ(a.skipped, b.skipped);
      EXPECT_EQ(a.round1_survivors, b.round1_survivors);
      EXPECT_EQ(a.round2_survivors, b.round2_survivors);
      EXPECT_EQ(a.round2_aborted, b.round2_aborted);
      EXPECT_GT(a.round1_survivors, 0);
    }
    // The sums differ by fixed-point rounding only (<= n 2^{-f-1} per entry;
    // the default 32-bit codec leaves f ~ 12-16 fractional bits here), which
    // moves the final MSE by ~1e-8; a protocol error would move it by >> 1e-3.
    EXPECT_NEAR(secure->test.mse, ideal->test.mse, 1e-6) << AggregationName(g);
    EXPECT_EQ(secure->round1_cost.aggregations, 4);
    EXPECT_GT(secure->round1_cost.upload_bytes, secure->round2_cost.upload_bytes / 2);
    EXPECT_EQ(ideal->round1_cost.upload_bytes, 0u);
  }
  // Beyond omega every round 1 aborts: the iteration is skipped, V unchanged.
  LflConfig c;
  c.iterations = 3;
  c.dim = 5;
  c.epsilon = 4.0;
  c.seed = 11;
  c.dropout_round1 = 0.8;
  c.device.pretrain_epochs = 5;
  c.device.finetune_epochs = 0;
  ASSERT_OK_AND_ASSIGN(auto skipped, SimulateLfl(c, SmallSumData(), SecAgg(GraphKind::kHarary, 3)));
  for (const auto& it : skipped.iterations) EXPECT_TRUE(it.skipped);
  EXPECT_EQ(skipped.test.mse, skipped.stage1_test.mse);
  EXPECT_EQ(skipped.round2_cost.aggregations, 0);
}

}  // namespace
}  // namespace fedmf::lfl
