// Top-N metrics computed by hand on tiny cases, and the ranking rule.
#include "common/mf/ranking.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fedmf::mf {
namespace {

using data::Rating;

// Scores fixed per item, the same for every user.
UserScorer Fixed(std::vector<double> by_item) {
  return [by_item](int32_t, std::vector<double>& scores) {
    for (size_t j = 0; j < scores.size(); ++j) scores[j] = by_item[j];
  };
}

TEST(RankingTest, MetricsMatchAHandComputation) {
  // 6 items ranked 5 > 4 > 3 > 2 > 1 > 0 by score. User 0 knows item 5, so
  // its top 2 is {4, 3}; it liked 3 (rating 5) and 0 (rating 4), and rated 4
  // only 2 (not relevant). User 1 liked nothing: not measured.
  const std::vector<Rating> known = {{0, 5, 3}, {1, 1, 5}};
  const std::vector<Rating> held_out = {{0, 3, 5}, {0, 0, 4}, {0, 4, 2}, {1, 2, 3}};
  RankingOptions o;
  o.k = 2;
  const RankingMetrics m = EvaluateRanking(known, held_out, 2, 6, Fixed({0, 1, 2, 3, 4, 5}), o);
  EXPECT_EQ(m.users, 1);
  EXPECT_DOUBLE_EQ(m.hit_rate, 1.0);
  EXPECT_DOUBLE_EQ(m.precision, 0.5);
  EXPECT_DOUBLE_EQ(m.recall, 0.5);
  // The hit at rank 2: 1/log2(3); ideal: two hits, 1 + 1/log2(3).
  EXPECT_NEAR(m.ndcg, (1 / std::log2(3.0)) / (1 + 1 / std::log2(3.0)), 1e-12);
}

TEST(RankingTest, KnownItemsAreNeverRecommendedAndTiesGoToTheSmallerItem) {
  const std::vector<Rating> known = {{0, 0, 5}};
  const std::vector<Rating> held_out = {{0, 1, 5}};
  RankingOptions o;
  o.k = 1;
  // All scores equal: the top 1 is item 1 (item 0 is known).
  EXPECT_DOUBLE_EQ(EvaluateRanking(known, held_out, 1, 3, Fixed({1, 1, 1}), o).hit_rate, 1.0);
  // Item 2 scored higher wins; the relevant item 1 is missed.
  EXPECT_DOUBLE_EQ(EvaluateRanking(known, held_out, 1, 3, Fixed({9, 1, 2}), o).hit_rate, 0.0);
}

TEST(RankingTest, CombineWeighsByMeasuredUsers) {
  RankingMetrics a{10, 1, 1.0, 1.0, 0.1, 1.0};
  RankingMetrics b{10, 3, 0.0, 0.0, 0.0, 0.0};
  const RankingMetrics c = CombineRanking({a, b});
  EXPECT_EQ(c.users, 4);
  EXPECT_DOUBLE_EQ(c.hit_rate, 0.25);
  EXPECT_DOUBLE_EQ(c.precision, 0.025);
}

TEST(RankingTest, RuleShrinksRarelyRatedItemsAndAddsPopularity) {
  const RankingRule plain{0, 0, 3.5};
  EXPECT_DOUBLE_EQ(RankingScore(plain, 4.3, 4), 4.3);
  const RankingRule shrunk{20, 0, 3.5};
  // 4 ratings: (4.3 - 3.5) * 4 / 24 above the mean.
  EXPECT_DOUBLE_EQ(RankingScore(shrunk, 4.3, 4), 3.5 + 0.8 * 4.0 / 24.0);
  EXPECT_LT(RankingScore(shrunk, 4.3, 4), RankingScore(shrunk, 4.0, 400));
  const RankingRule popular{0, 1, 3.5};
  EXPECT_DOUBLE_EQ(RankingScore(popular, 4.0, 9), 4.0 + std::log(10.0));
}

// Users like the popular items; the model's predictions favour a rarely
// rated item. Validation ratings choose a rule that trusts popularity, and
// it beats the plain prediction on held-out ratings.
TEST(RankingTest, ChosenRuleBeatsThePlainPredictionWhenPopularityIsWhatUsersLike) {
  const int32_t users = 40, items = 12;
  // Items 0..4 are liked by nearly everyone and rated by half the users;
  // item 11 has one rating, and the model predicts it highest for all.
  std::vector<Rating> known, validation, test;
  for (int32_t u = 0; u < users; ++u) {
    for (int32_t j = 0; j < 5; ++j) {
      const int slot = (u + j) % 4;
      if (slot == 0) known.push_back({u, j, 5});
      if (slot == 1) validation.push_back({u, j, 5});
      if (slot == 2) test.push_back({u, j, 5});
    }
    for (int32_t j = 5; j < 11; ++j) {
      if ((u + j) % 5 == 0) known.push_back({u, j, 2});
    }
  }
  known.push_back({0, 11, 5});
  Matrix u = Matrix::Ones(users, 1);
  Matrix v(items, 1);
  for (int32_t j = 0; j < items; ++j) v(j, 0) = j == 11 ? 4.5 : (j < 5 ? 4.0 : 2.5);
  RankingOptions o;
  o.k = 1;
  const RankingRule chosen = ChooseRankingRule(u, v, known, validation, o);
  EXPECT_GT(chosen.shrinkage + chosen.popularity_weight, 0);
  const std::vector<int32_t> support = ItemSupport(known, items);
  const RankingMetrics plain = EvaluateRanking(
      known, test, users, items, ModelScorer(u, v, support, RankingRule{0, 0, chosen.mean}), o);
  const RankingMetrics ruled =
      EvaluateRanking(known, test, users, items, ModelScorer(u, v, support, chosen), o);
  EXPECT_GT(ruled.hit_rate, plain.hit_rate);
  // And the popularity baseline ranks by support alone.
  const RankingMetrics popular =
      EvaluateRanking(known, test, users, items, PopularityScorer(support), o);
  EXPECT_GT(popular.hit_rate, plain.hit_rate);
}

TEST(RankingTest, ResultDoesNotDependOnThreads) {
  std::vector<Rating> known, held_out;
  for (int32_t u = 0; u < 50; ++u) {
    for (int32_t j = 0; j < 30; ++j) {
      if ((u * 7 + j * 3) % 5 == 0) known.push_back({u, j, static_cast<float>(1 + (u + j) % 5)});
      if ((u * 7 + j * 3) % 5 == 1) held_out.push_back({u, j, static_cast<float>(1 + (u * j) % 5)});
    }
  }
  Matrix u = Matrix::Random(50, 3), v = Matrix::Random(30, 3);
  const std::vector<int32_t> support = ItemSupport(known, 30);
  RankingOptions one, four;
  four.threads = 4;
  const RankingMetrics a =
      EvaluateRanking(known, held_out, 50, 30, ModelScorer(u, v, support, RankingRule{}), one);
  const RankingMetrics b =
      EvaluateRanking(known, held_out, 50, 30, ModelScorer(u, v, support, RankingRule{}), four);
  EXPECT_EQ(a.users, b.users);
  EXPECT_EQ(a.ndcg, b.ndcg);
  EXPECT_EQ(a.recall, b.recall);
}

}  // namespace
}  // namespace fedmf::mf
