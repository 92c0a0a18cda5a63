#include "common/cdr/ranking_metrics.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace fedmf::cdr {
namespace {

TEST(RankOfPositiveTest, TiesCountAgainstThePositive) {
  const std::vector<double> neg = {0.1, 0.9, 0.5, 0.5};
  EXPECT_EQ(RankOfPositive(1.0, neg), 1);
  EXPECT_EQ(RankOfPositive(0.5, neg), 4);  // 0.9 above, two ties
  EXPECT_EQ(RankOfPositive(0.0, neg), 5);
  EXPECT_EQ(RankOfPositive(std::nan(""), neg), 5);
}

TEST(EvaluateRankingTest, HandComputedValues) {
  // Score = item id; the positive's rank is 1 + the number of negatives with
  // a larger id. Ranks 1, 3, 6 and 12.
  std::vector<EvalCase> cases(4);
  cases[0] = {0, 50, {1, 2, 3}};
  cases[1] = {1, 50, {60, 70, 1, 2}};
  cases[2] = {2, 50, {51, 52, 53, 54, 55, 1}};
  cases[3] = {3, 50, {}};
  for (int j = 0; j < 11; ++j) cases[3].negatives.push_back(100 + j);
  const RankingMetrics m =
      EvaluateRanking(cases, [](int32_t, int32_t item) { return static_cast<double>(item); });
  EXPECT_EQ(m.cases, 4);
  EXPECT_DOUBLE_EQ(m.hr_at_5, 2.0 / 4);   // ranks 1, 3
  EXPECT_DOUBLE_EQ(m.hr_at_10, 3.0 / 4);  // ranks 1, 3, 6
  // NDCG: 1/log2(2) = 1, 1/log2(4) = 0.5, 1/log2(7) = 0.356207...
  EXPECT_DOUBLE_EQ(m.ndcg_at_5, (1.0 + 0.5) / 4);
  EXPECT_NEAR(m.ndcg_at_10, (1.0 + 0.5 + 0.35620718710802218) / 4, 1e-15);
  EXPECT_NEAR(m.mrr, (1.0 + 1.0 / 3 + 1.0 / 6 + 1.0 / 12) / 4, 1e-15);
}

TEST(EvaluateRankingTest, UsesTheUserOfEachCase) {
  std::vector<EvalCase> cases = {{0, 1, {2}}, {1, 1, {2}}};
  // User 0 prefers item 1, user 1 item 2.
  const RankingMetrics m = EvaluateRanking(cases, [](int32_t u, int32_t i) {
    return u == 0 ? -static_cast<double>(i) : static_cast<double>(i);
  });
  EXPECT_DOUBLE_EQ(m.hr_at_5, 1.0);  // rank 1 and rank 2 are both within 5
  EXPECT_DOUBLE_EQ(m.mrr, (1.0 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(m.ndcg_at_10, (1.0 + 1.0 / std::log2(3.0)) / 2);
}

TEST(EvaluateRankingTest, NoCasesIsAllZero) {
  const RankingMetrics m = EvaluateRanking({}, [](int32_t, int32_t) { return 0.0; });
  EXPECT_EQ(m.cases, 0);
  EXPECT_EQ(m.hr_at_10, 0);
  EXPECT_EQ(m.mrr, 0);
}

}  // namespace
}  // namespace fedmf::cdr
