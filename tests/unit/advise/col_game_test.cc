// The CoL game on hand-made trade-off tables whose equilibria are worked out
// by hand in the comments.
#include "common/advise/col_game.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::advise {
namespace {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Actions inf (p = 0), 4 (p = 0.2), 1 (p = 0.5), alone (p = 1); theta = 1.
// Player n's gain together: g(own) - h(other) with g = (0.10, 0.095, 0.03)
// and h = (0, 0.005, 0.02), i.e. error 1 - gain.
TradeoffTable SymmetricTable() {
  const double g[3] = {0.10, 0.095, 0.03};
  const double h[3] = {0.0, 0.005, 0.02};
  TradeoffTable t;
  t.actions = {{false, kInf}, {false, 4}, {false, 1}, {true, 0}};
  t.alone_error[0] = t.alone_error[1] = 1.0;
  for (int n = 0; n < 2; ++n) t.error[n].assign(4, std::vector<double>(4, 0.0));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      t.error[0][i][j] = 1.0 - (g[i] - h[j]);
      t.error[1][i][j] = 1.0 - (g[j] - h[i]);
    }
  }
  return t;
}

std::pair<size_t, size_t> P(size_t i, size_t j) { return {i, j}; }

std::vector<std::pair<size_t, size_t>> Cells(const std::vector<Equilibrium>& eq) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& e : eq) out.push_back({e.cell.i, e.cell.j});
  return out;
}

TEST(PrivacyLevelTest, PaperMapping) {
  EXPECT_EQ(PrivacyLevel({false, kInf}), 0.0);
  EXPECT_DOUBLE_EQ(PrivacyLevel({false, 4}), 0.2);  // the paper's p = 0.2 <=> eps = 4
  EXPECT_DOUBLE_EQ(PrivacyLevel({false, 1}), 0.5);
  EXPECT_EQ(PrivacyLevel({true, 0}), 1.0);
  EXPECT_EQ(ActionLabel({false, kInf}), "inf");
  EXPECT_EQ(ActionLabel({false, 0.5}), "0.5");
  EXPECT_EQ(ActionLabel({true, 0}), "alone");
}

TEST(CoLGameTest, ConcernedPlayersMeetInTheInterior) {
  // C = 0.05: u = g(own) - h(other) - 0.05 (1 - p_own). Against eps 4
  // (h = 0.005) the collaborating payoffs are 0.045, 0.050, 0.000 and alone
  // 0, so eps 4 is the best response: (4, 4) is an equilibrium with
  // u = 0.05 each and PoP = 1 - (0.09 + 0.09) / 0.20 = 0.10.
  ASSERT_OK_AND_ASSIGN(auto game, CoLGame::Create(SymmetricTable(), {1, 0.05}, {1, 0.05}));
  EXPECT_THAT(Cells(game.PureNashEquilibria()), ::testing::ElementsAre(P(1, 1), P(3, 3)));
  const Equilibrium e = game.Describe({1, 1});
  EXPECT_NEAR(e.utility[0], 0.05, 1e-12);
  EXPECT_NEAR(e.utility[1], 0.05, 1e-12);
  ASSERT_TRUE(e.price_of_privacy.has_value());
  EXPECT_NEAR(*e.price_of_privacy, 0.10, 1e-12);

  const Recommendation rec = Recommend(game);
  EXPECT_TRUE(rec.collaborate);
  EXPECT_EQ(rec.equilibrium.cell, (Cell{1, 1}));
  EXPECT_THAT(rec.reason, HasSubstr("player 1 at epsilon 4, player 2 at epsilon 4"));

  // Best-response dynamics from (inf, inf): player 1 moves to 4, player 2
  // answers 4, and nobody moves again.
  auto dyn = game.BestResponseDynamics();
  ASSERT_TRUE(dyn.has_value());
  EXPECT_EQ(dyn->cell, (Cell{1, 1}));
}

TEST(CoLGameTest, UnconcernedPlayersCollaborateWithoutNoise) {
  auto game = CoLGame::Create(SymmetricTable(), {1, 0}, {1, 0});  // Theorem 2
  ASSERT_THAT(game, IsOk());
  const Recommendation rec = Recommend(*game);
  EXPECT_TRUE(rec.collaborate);
  EXPECT_EQ(rec.equilibrium.cell, (Cell{0, 0}));
  EXPECT_NEAR(*rec.equilibrium.price_of_privacy, 0.0, 1e-12);
}

TEST(CoLGameTest, CollaborationAsAServiceMatchesTheorem3) {
  // Player 2 unconcerned plays inf; player 1 (C = 0.05) answers 4:
  // b1(4, inf) = 0.095, b2(4, inf) = 0.10 - 0.005, PoP = 1 - 0.19 / 0.2.
  ASSERT_OK_AND_ASSIGN(auto game, CoLGame::Create(SymmetricTable(), {1, 0.05}, {1, 0}));
  const Recommendation rec = Recommend(game);
  EXPECT_EQ(rec.equilibrium.cell, (Cell{1, 0}));
  EXPECT_NEAR(*rec.equilibrium.price_of_privacy, 0.05, 1e-12);
}

TEST(CoLGameTest, PrivacyMindedPlayersStayAlone) {
  // C = 0.2 exceeds every gain: the only equilibrium is (alone, alone), PoP 1.
  ASSERT_OK_AND_ASSIGN(auto game, CoLGame::Create(SymmetricTable(), {1, 0.2}, {1, 0.2}));
  EXPECT_THAT(Cells(game.PureNashEquilibria()), ::testing::ElementsAre(P(3, 3)));
  const Recommendation rec = Recommend(game);
  EXPECT_FALSE(rec.collaborate);
  EXPECT_NEAR(*rec.equilibrium.price_of_privacy, 1.0, 1e-12);
  EXPECT_THAT(rec.reason, HasSubstr("stay alone"));
}

TEST(CoLGameTest, EveryEquilibriumIsIndividuallyRationalBecauseAloneIsAnAction) {
  for (double c : {0.0, 0.03, 0.05, 0.08, 0.1, 0.2}) {
    ASSERT_OK_AND_ASSIGN(auto game, CoLGame::Create(SymmetricTable(), {1, c}, {1, c}));
    for (const Equilibrium& e : game.PureNashEquilibria()) {
      EXPECT_TRUE(e.individually_rational) << "C = " << c;
      EXPECT_GE(e.utility[0], -1e-12);
    }
    // Theorem 1: (alone, alone) is always an equilibrium.
    EXPECT_THAT(Cells(game.PureNashEquilibria()), ::testing::Contains(P(3, 3)));
  }
}

TEST(CoLGameTest, NoGainMakesThePriceOfPrivacyUndefined) {
  TradeoffTable t = SymmetricTable();
  for (int n = 0; n < 2; ++n) {
    for (auto& row : t.error[n]) {
      for (double& e : row) e = 1.2;  // together is worse than alone (theta = 1)
    }
  }
  ASSERT_OK_AND_ASSIGN(auto game, CoLGame::Create(t, {1, 0}, {1, 0}));
  EXPECT_EQ(game.Benefit(0, {0, 0}), 0.0);  // [theta - Phi]^+ clips the loss
  EXPECT_FALSE(game.PriceOfPrivacy({0, 0}).has_value());
  EXPECT_FALSE(Recommend(game).collaborate);
}

TEST(CoLGameTest, RejectsMalformedInput) {
  TradeoffTable t = SymmetricTable();
  EXPECT_THAT(std::string(CoLGame::Create(t, {0, 0.1}, {1, 0.1}).status().message()),
              HasSubstr("player 1: accuracy weight B = 0"));
  EXPECT_THAT(std::string(CoLGame::Create(t, {1, -1}, {1, 0.1}).status().message()),
              HasSubstr("player 1: privacy weight C = -1"));

  TradeoffTable no_alone = t;
  no_alone.actions[3] = {false, 2};
  EXPECT_THAT(std::string(CoLGame::Create(no_alone, {1, 0}, {1, 0}).status().message()),
              HasSubstr("\"alone\""));

  TradeoffTable no_open = t;
  no_open.actions[0] = {false, 8};
  EXPECT_THAT(std::string(CoLGame::Create(no_open, {1, 0}, {1, 0}).status().message()),
              HasSubstr("non-private action"));

  TradeoffTable dup = t;
  dup.actions[2] = {false, 4};
  EXPECT_THAT(std::string(CoLGame::Create(dup, {1, 0}, {1, 0}).status().message()),
              HasSubstr("appears twice"));

  TradeoffTable nan = t;
  nan.error[1][1][2] = std::nan("");
  EXPECT_THAT(std::string(CoLGame::Create(nan, {1, 0}, {1, 0}).status().message()),
              HasSubstr("player 2: error at (4, 1)"));

  TradeoffTable ragged = t;
  ragged.error[0][2].pop_back();
  EXPECT_THAT(std::string(CoLGame::Create(ragged, {1, 0}, {1, 0}).status().message()),
              HasSubstr("player 1: error row 2 has 3 entries, want 4"));

  TradeoffTable bad_theta = t;
  bad_theta.alone_error[1] = 0;
  EXPECT_THAT(std::string(CoLGame::Create(bad_theta, {1, 0}, {1, 0}).status().message()),
              HasSubstr("player 2: error alone = 0"));
}

}  // namespace
}  // namespace fedmf::advise
