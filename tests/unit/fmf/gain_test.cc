#include "common/fmf/gain.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::fmf {
namespace {

TEST(GainCaptured, IssueExample) {
  // issue #16: (1.0423 - 0.9999) / (1.0423 - 0.868) = 24.3%.
  auto g = GainCaptured(1.0423, 0.9999, 0.868);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(*g, 0.4240 / 1.7430, 1e-12);
  EXPECT_NEAR(*g, 0.2433, 1e-4);
}

TEST(GainSummary, MeanSdAndStudentInterval) {
  const GainSummary s = SummarizeGains({0.1, 0.2, std::nullopt, 0.3});
  EXPECT_EQ(s.count, 3);
  EXPECT_NEAR(s.mean, 0.2, 1e-12);
  ASSERT_TRUE(s.sd.has_value());
  EXPECT_NEAR(*s.sd, 0.1, 1e-12);
  // t(0.975, 2) = 4.3027: 0.2 -+ 4.3027 * 0.1 / sqrt(3).
  EXPECT_NEAR(*s.ci95_low, 0.2 - 4.3027 * 0.1 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(*s.ci95_high, 0.2 + 4.3027 * 0.1 / std::sqrt(3.0), 1e-9);
  const GainSummary one = SummarizeGains({0.5});
  EXPECT_EQ(one.count, 1);
  EXPECT_FALSE(one.sd.has_value());
  EXPECT_FALSE(one.ci95_low.has_value());
  EXPECT_EQ(SummarizeGains({}).count, 0);
  EXPECT_NEAR(StudentT975(1), 12.7062, 1e-4);
  EXPECT_NEAR(StudentT975(60), 2.0003, 2e-4);   // published 2.0003
  EXPECT_NEAR(StudentT975(120), 1.9799, 2e-4);  // published 1.9799
}

// The decision rule of issue #56: the 95% interval must exclude 0.
TEST(GainVerdict, TheIntervalMustExcludeZero) {
  // mean 0.2, sd 0.1, n = 3: [0.2 -+ 0.2484] contains 0.
  const GainSummary wide = SummarizeGains({0.1, 0.2, 0.3});
  EXPECT_EQ(JudgeGain(wide), GainVerdict::kNotDistinguishable);
  EXPECT_EQ(GainVerdictSentence(wide),
            "not distinguishable from training alone with 3 repeats: the 95% interval "
            "[-4.8%, 44.8%] contains 0");
  // The same spread around 0.5: [0.2516, 0.7484] lies above 0.
  const GainSummary helps = SummarizeGains({0.4, 0.5, 0.6});
  EXPECT_EQ(JudgeGain(helps), GainVerdict::kHelps);
  EXPECT_STREQ(GainVerdictName(JudgeGain(helps)), "helps");
  EXPECT_EQ(GainVerdictSentence(helps),
            "joining helps: the 95% interval [25.2%, 74.8%] lies above 0 (3 repeats)");
  const GainSummary hurts = SummarizeGains({-0.4, -0.5, -0.6});
  EXPECT_EQ(JudgeGain(hurts), GainVerdict::kHurts);
  EXPECT_STREQ(GainVerdictName(JudgeGain(hurts)), "hurts");
  EXPECT_EQ(GainVerdictSentence(hurts),
            "joining hurts: the 95% interval [-74.8%, -25.2%] lies below 0 (3 repeats)");
  // Parties that keep their own models: gain exactly 0 every time, the
  // interval [0, 0] touches 0.
  EXPECT_EQ(JudgeGain(SummarizeGains({0.0, 0.0, 0.0})), GainVerdict::kNotDistinguishable);
  // One run, however large its gain, has no interval.
  const GainSummary one = SummarizeGains({0.9});
  EXPECT_EQ(JudgeGain(one), GainVerdict::kNotDistinguishable);
  EXPECT_STREQ(GainVerdictName(JudgeGain(one)), "not distinguishable");
  EXPECT_THAT(GainVerdictSentence(one), ::testing::HasSubstr("with 1 repeat: no spread"));
  // No gain defined in any run (pooling no better than alone).
  const GainSummary none = SummarizeGains({std::nullopt, std::nullopt});
  EXPECT_EQ(JudgeGain(none), GainVerdict::kUndefined);
  EXPECT_STREQ(GainVerdictName(JudgeGain(none)), "undefined");
}

TEST(GainCaptured, EndpointsAndSigns) {
  EXPECT_DOUBLE_EQ(*GainCaptured(1.0, 1.0, 0.8), 0.0);     // no better than alone
  EXPECT_DOUBLE_EQ(*GainCaptured(1.0, 0.8, 0.8), 1.0);     // as good as pooling
  EXPECT_NEAR(*GainCaptured(1.0, 1.1, 0.8), -0.5, 1e-12);  // worse than alone
  EXPECT_NEAR(*GainCaptured(1.0, 0.7, 0.8), 1.5, 1e-12);   // better than central
}

TEST(GainCaptured, UndefinedWithoutRoomOrFiniteInputs) {
  EXPECT_FALSE(GainCaptured(0.8, 0.9, 0.8).has_value());  // central == local
  EXPECT_FALSE(GainCaptured(0.8, 0.9, 0.9).has_value());  // central worse
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(GainCaptured(nan, 0.9, 0.8).has_value());
  EXPECT_FALSE(GainCaptured(1.0, inf, 0.8).has_value());
}

TEST(PoolFederation, KeepsTrainTestMembershipInGlobalIds) {
  data::Federation f;
  f.num_users = 3;
  f.num_items = 2;
  data::PartyData a;
  a.party = 0;
  a.global_users = {2};
  a.global_items = {0, 1};
  a.train = {{0, 1, 4.0f}};
  a.test = {{0, 0, 3.0f}};
  data::PartyData b;
  b.party = 1;
  b.global_users = {0, 1};
  b.global_items = {0, 1};
  b.train = {{1, 0, 5.0f}, {0, 1, 2.0f}};
  f.parties = {a, b};
  ASSERT_OK_AND_ASSIGN(auto pooled, PoolFederation(f));
  ASSERT_EQ(pooled.parties.size(), 1u);
  const data::PartyData& p = pooled.parties[0];
  EXPECT_EQ(p.num_users(), 3);
  EXPECT_EQ(p.num_items(), 2);
  const std::vector<data::Rating> train = {{0, 1, 2.0f}, {1, 0, 5.0f}, {2, 1, 4.0f}};
  const std::vector<data::Rating> test = {{2, 0, 3.0f}};
  EXPECT_EQ(p.train, train);
  EXPECT_EQ(p.test, test);
}

TEST(PoolFederation, RefusesOutOfRangeIds) {
  data::Federation f;
  f.num_users = 1;
  f.num_items = 1;
  data::PartyData a;
  a.global_users = {0};
  a.global_items = {0};
  a.train = {{0, 3, 1.0f}};
  f.parties = {a};
  EXPECT_THAT(PoolFederation(f), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(PoolFederation(data::Federation{}), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::fmf
