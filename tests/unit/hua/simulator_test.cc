// SimulateHua end to end on a small synthetic dataset: the paper's mechanism
// (Small) and the valid variant (Valid).
#include "common/hua/simulator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/data/partition.h"
#include "common/data/synthetic.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::hua {
namespace {

const data::PartyData& Split() {
  static const data::PartyData* split = [] {
    data::SyntheticOptions o;
    o.num_users = 150;
    o.num_items = 80;
    o.density = 0.2;
    o.rank = 3;
    auto dataset = data::GenerateSynthetic(o);
    auto fed = data::PartitionCentral(*dataset, {0.1, 1});
    return new data::PartyData(fed->parties[0]);
  }();
  return *split;
}

HuaParams Small(double epsilon) {
  HuaParams p;
  p.dim = 10;
  p.iterations = 60;
  p.baseline_iterations = 60;
  p.epsilon = epsilon;
  p.paper_noise = true;
  return p;
}

HuaParams Valid(double epsilon) {
  HuaParams p = Small(epsilon);
  p.paper_noise = false;
  p.theta = 15;
  p.clip = 2;
  return p;
}

TEST(SimulateHua, WithoutNoiseS2IsTheBaseline) {
  ASSERT_OK_AND_ASSIGN(auto r, SimulateHua(Scenario::kUntrusted, Split(), Small(INFINITY), 3));
  EXPECT_NEAR(r.mean_abs_error_increase, 0.0, 1e-9);
  EXPECT_LT(r.baseline_test.mse, 1.2);  // it learned something
  // S2-TP differs only by fixed-point rounding.
  ASSERT_OK_AND_ASSIGN(auto tp,
                       SimulateHua(Scenario::kUntrustedThirdParty, Split(), Small(INFINITY), 3));
  EXPECT_NEAR(tp.mean_abs_error_increase, 0.0, 1e-5);
}

TEST(SimulateHua, LargeEpsilonIsCloseToNonPrivate) {
  for (Scenario s : {Scenario::kTrusted, Scenario::kUntrusted, Scenario::kUntrustedThirdParty}) {
    ASSERT_OK_AND_ASSIGN(auto r, SimulateHua(s, Split(), Small(1e5), 4));
    EXPECT_LT(std::abs(r.mean_abs_error_increase), 0.05) << ScenarioName(s);
    EXPECT_EQ(r.test.count, r.baseline_test.count);
  }
  HuaParams lemma1 = Small(1e5);
  lemma1.s1_noise = ObjectiveNoise::kLaplace;
  ASSERT_OK_AND_ASSIGN(auto r, SimulateHua(Scenario::kTrusted, Split(), lemma1, 4));
  EXPECT_LT(std::abs(r.mean_abs_error_increase), 0.05);
}

TEST(SimulateHua, SmallEpsilonCostsAccuracy) {
  auto loose = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Small(1e5), 5);
  auto tight = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Small(0.05), 5);
  ASSERT_TRUE(loose.ok() && tight.ok());
  EXPECT_GT(tight->test.mae, loose->test.mae + 0.1);
}

TEST(SimulateHua, DeterministicUnderASeed) {
  auto a = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Small(1.0), 6);
  auto b = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Small(1.0), 6);
  auto c = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Small(1.0), 7);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->test.mse, b->test.mse);
  EXPECT_EQ(a->error_cdf.quantiles, b->error_cdf.quantiles);
  EXPECT_NE(a->test.mse, c->test.mse);
}

TEST(SimulateHua, S3RunsWithDynamicUsersAndDropouts) {
  HuaParams p = Small(INFINITY);
  p.max_online = 30;
  p.iterations = 150;
  p.dropout_prob = 0.05;
  ASSERT_OK_AND_ASSIGN(auto r, SimulateHua(Scenario::kDynamic, Split(), p, 8));
  EXPECT_LE(r.mean_users_per_iteration, 30.0);
  EXPECT_GT(r.mean_users_per_iteration, 5.0);
  EXPECT_GT(r.dropped_users, 0);
  EXPECT_GT(r.traffic.init_bytes, 0);
  EXPECT_GT(r.traffic.down_per_user, r.traffic.up_per_user);
  EXPECT_TRUE(std::isfinite(r.test.mse));
  // Without noise, the dynamic run still learns (worse than the baseline,
  // which sees every user every iteration).
  EXPECT_LT(r.test.mse, 2.0);
}

// Bytes per user and iteration in S2-TP, from the layout in messages.h: a
// MaskedReport is 1 + 3*4 + 4 bytes of header and 4 + (4 + 8d) per item.
TEST(SimulateHua, TrafficMatchesTheMessageLayout) {
  HuaParams p = Small(1.0);
  p.iterations = 1;
  ASSERT_OK_AND_ASSIGN(auto r, SimulateHua(Scenario::kUntrustedThirdParty, Split(), p, 9));
  const double ratings = static_cast<double>(Split().train.size());
  const double users = r.mean_users_per_iteration;
  EXPECT_DOUBLE_EQ(r.traffic.up_per_user, 17 + ratings / users * (12 + 8 * p.dim));
  // Down: 3*4 + 4 header; per item 3*4 + v, H_j (first time), H~, psi.
  EXPECT_DOUBLE_EQ(r.traffic.down_per_user, 16 + ratings / users * (12 + 4 * (4 + 8 * p.dim)));
}

TEST(SimulateHua, ValidVariantWithoutNoiseIsTheSameWithOrWithoutTheThirdParty) {
  auto s2 = SimulateHua(Scenario::kUntrusted, Split(), Valid(INFINITY), 3);
  auto tp = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Valid(INFINITY), 3);
  ASSERT_THAT(s2, IsOk());
  ASSERT_THAT(tp, IsOk());
  // Fixed-point rounding only.
  EXPECT_NEAR(s2->test.mse, tp->test.mse, 1e-5);
  EXPECT_TRUE(std::isinf(s2->epsilon));
  // It learned something beyond each user's mean.
  EXPECT_LT(s2->test.mse, s2->user_mean_test.mse);
  // Every user kept at most theta ratings.
  EXPECT_LE(s2->ratings_used, int64_t{15} * Split().num_users());
  EXPECT_LT(s2->ratings_used, static_cast<int64_t>(Split().train.size()));
}

TEST(SimulateHua, ValidVariantReportsTheEpsilonItSpentAndCostsAccuracyAtSmallEpsilon) {
  auto loose = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Valid(INFINITY), 5);
  auto tight = SimulateHua(Scenario::kUntrustedThirdParty, Split(), Valid(1.0), 5);
  ASSERT_TRUE(loose.ok() && tight.ok());
  EXPECT_LE(tight->epsilon, 1.0);
  EXPECT_GT(tight->epsilon, 0.99);  // every user took part in all T iterations
  EXPECT_EQ(tight->max_user_releases, 60);
  EXPECT_EQ(tight->epsilon_median_user, tight->epsilon);
  EXPECT_GT(tight->test.mse, loose->test.mse + 0.01);
  EXPECT_GT(tight->privacy.sigma, 0);
}

TEST(SimulateHua, ValidS3ChargesEachUserForTheIterationsSheTookPartIn) {
  HuaParams p = Valid(2.0);
  p.max_online = 30;
  p.iterations = 40;
  p.dropout_prob = 0.05;
  ASSERT_OK_AND_ASSIGN(auto r, SimulateHua(Scenario::kDynamic, Split(), p, 8));
  EXPECT_LE(r.epsilon, 2.0);
  EXPECT_GT(r.max_user_releases, 0);
  EXPECT_LE(r.max_user_releases, 40);
  // At most 30 of 150 users per iteration: the median user released less
  // than the busiest one, and spent less.
  EXPECT_LT(r.epsilon_median_user, r.epsilon);
  EXPECT_GT(r.dropped_users, 0);
  EXPECT_EQ(r.traffic.init_bytes, 0);  // no eta_j to initialize
  EXPECT_TRUE(std::isfinite(r.test.mse));
}

TEST(SimulateHua, ValidS1UsesADataIndependentUAndReportsItsPureEpsilon) {
  ASSERT_OK_AND_ASSIGN(auto r, SimulateHua(Scenario::kTrusted, Split(), Valid(1e5), 4));
  EXPECT_DOUBLE_EQ(r.epsilon, 1e5);
  EXPECT_EQ(r.privacy.delta, 0);
  ASSERT_OK_AND_ASSIGN(auto tight, SimulateHua(Scenario::kTrusted, Split(), Valid(0.5), 4));
  EXPECT_DOUBLE_EQ(tight.epsilon, 0.5);
  EXPECT_GT(tight.test.mse, r.test.mse);
}

}  // namespace
}  // namespace fedmf::hua
