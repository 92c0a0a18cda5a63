// fedmf advise --repeats: the mean grid, each player's gain with its 95%
// interval at the recommended cell, and the rule that keeps a collaboration
// only when both intervals lie above 0 — on hand-made tables.
#include "common/advise/repeats.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::advise {
namespace {

using ::testing::HasSubstr;

constexpr double kNoNoise = std::numeric_limits<double>::infinity();

// Actions inf, 4, alone; alone error 1 for both; together at (inf, inf) each
// player's error is 1 - gain[n], elsewhere 1 (no gain).
TradeoffTable RepeatTable(double gain1, double gain2) {
  TradeoffTable t;
  t.actions = {{false, kNoNoise}, {false, 4}, {true, 0}};
  t.alone_error[0] = t.alone_error[1] = 1.0;
  for (int n = 0; n < 2; ++n) t.error[n].assign(3, std::vector<double>(3, 1.0));
  t.error[0][0][0] = 1.0 - gain1;
  t.error[1][0][0] = 1.0 - gain2;
  return t;
}

RepeatedAdvice AdviseOn(const std::vector<TradeoffTable>& tables) {
  auto mean = MeanTable(tables);
  EXPECT_THAT(mean, IsOk());
  auto game = CoLGame::Create(*mean, {1, 0}, {1, 0});
  EXPECT_THAT(game, IsOk());
  return AdviseWithRepeats(*game, Recommend(*game), tables);
}

TEST(RepeatsTest, MeanTableAveragesEveryCellAndRefusesAnotherGrid) {
  ASSERT_OK_AND_ASSIGN(TradeoffTable mean,
                       MeanTable({RepeatTable(0.1, 0.2), RepeatTable(0.3, 0.0)}));
  EXPECT_DOUBLE_EQ(mean.error[0][0][0], 0.8);
  EXPECT_DOUBLE_EQ(mean.error[1][0][0], 0.9);
  EXPECT_DOUBLE_EQ(mean.error[0][1][1], 1.0);
  EXPECT_DOUBLE_EQ(mean.alone_error[0], 1.0);
  TradeoffTable other = RepeatTable(0.1, 0.1);
  other.actions[1].epsilon = 2;
  EXPECT_THAT(MeanTable({RepeatTable(0.1, 0.1), other}).status().message(),
              HasSubstr("repeat 2 measured another grid"));
  EXPECT_THAT(MeanTable({}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(RepeatsTest, CellGainIsSignedAndZeroWhenAlone) {
  const std::vector<TradeoffTable> t = {RepeatTable(0.1, -0.05), RepeatTable(0.2, -0.05),
                                        RepeatTable(0.3, -0.05)};
  const fmf::GainSummary g1 = CellGain(t, 0, {0, 0});
  EXPECT_EQ(g1.count, 3);
  EXPECT_NEAR(g1.mean, 0.2, 1e-12);
  EXPECT_NEAR(*g1.sd, 0.1, 1e-12);
  // Below 0, not clipped as the game's b_n is.
  EXPECT_NEAR(CellGain(t, 1, {0, 0}).mean, -0.05, 1e-12);
  const fmf::GainSummary alone = CellGain(t, 0, {2, 0});
  EXPECT_EQ(alone.mean, 0.0);
  EXPECT_EQ(*alone.sd, 0.0);
}

TEST(RepeatsTest, CollaborationNeedsBothIntervalsAboveZero) {
  // Both gain 0.2 -+ 0.01: the game collaborates at (inf, inf), both intervals
  // lie above 0.
  RepeatedAdvice sure =
      AdviseOn({RepeatTable(0.19, 0.21), RepeatTable(0.20, 0.20), RepeatTable(0.21, 0.19)});
  EXPECT_TRUE(sure.game_collaborates);
  EXPECT_TRUE(sure.recommendation.collaborate);
  EXPECT_EQ(sure.judged, (Cell{0, 0}));
  EXPECT_EQ(sure.verdict[0], fmf::GainVerdict::kHelps);
  EXPECT_EQ(sure.verdict[1], fmf::GainVerdict::kHelps);
  EXPECT_THAT(sure.recommendation.reason, HasSubstr("lie above 0"));

  // Player 2's mean gain is positive (0.1) but swings -0.2..0.4 over three
  // seeds: its interval contains 0, so the players stay alone.
  RepeatedAdvice swing =
      AdviseOn({RepeatTable(0.19, -0.2), RepeatTable(0.20, 0.1), RepeatTable(0.21, 0.4)});
  EXPECT_TRUE(swing.game_collaborates);
  EXPECT_FALSE(swing.recommendation.collaborate);
  EXPECT_EQ(swing.recommendation.equilibrium.cell, (Cell{2, 2}));
  EXPECT_EQ(swing.verdict[0], fmf::GainVerdict::kHelps);
  EXPECT_EQ(swing.verdict[1], fmf::GainVerdict::kNotDistinguishable);
  EXPECT_THAT(
      swing.recommendation.reason,
      HasSubstr("but there player 2's gain over training alone is not distinguishable from 0 "
                "(95% intervals over the repeats)"));
  EXPECT_THAT(swing.recommendation.reason, HasSubstr("stay alone"));

  // Player 1 is worse together (its clipped b is 0, so the game, indifferent
  // for it, still collaborates for player 2's sake): told below 0.
  RepeatedAdvice worse =
      AdviseOn({RepeatTable(-0.09, 0.19), RepeatTable(-0.1, 0.2), RepeatTable(-0.11, 0.21)});
  EXPECT_TRUE(worse.game_collaborates);
  EXPECT_FALSE(worse.recommendation.collaborate);
  EXPECT_EQ(worse.verdict[0], fmf::GainVerdict::kHurts);
  EXPECT_EQ(worse.verdict[1], fmf::GainVerdict::kHelps);
  EXPECT_THAT(worse.recommendation.reason,
              HasSubstr("but there player 1's gain over training alone lies below 0 (95%"));

  // One repeat: the game's answer stands, with the caveat.
  RepeatedAdvice one = AdviseOn({RepeatTable(0.2, 0.2)});
  EXPECT_TRUE(one.recommendation.collaborate);
  EXPECT_EQ(one.verdict[0], fmf::GainVerdict::kNotDistinguishable);
  EXPECT_THAT(one.recommendation.reason, HasSubstr("one repeat"));
}

TEST(RepeatsTest, StayingAloneJudgesTheNonPrivateCell) {
  // Collaborating makes both worse: the game stays alone; the judged cell is
  // (inf, inf), where both gains are told below 0.
  RepeatedAdvice hurt =
      AdviseOn({RepeatTable(-0.19, -0.1), RepeatTable(-0.2, -0.11), RepeatTable(-0.21, -0.12)});
  EXPECT_FALSE(hurt.game_collaborates);
  EXPECT_FALSE(hurt.recommendation.collaborate);
  EXPECT_EQ(hurt.judged, (Cell{0, 0}));
  EXPECT_EQ(hurt.verdict[0], fmf::GainVerdict::kHurts);
  EXPECT_EQ(hurt.verdict[1], fmf::GainVerdict::kHurts);
}

}  // namespace
}  // namespace fedmf::advise
