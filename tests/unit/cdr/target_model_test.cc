#include "common/cdr/target_model.h"

#include <cmath>

#include "common/cdr/ranking_metrics.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::cdr {
namespace {

TEST(RobustnessLossTest, MatchesFiniteDifferences) {
  Eigen::MatrixXd z(6, 3);
  z << 0.3, -1.2, 0.5, 1.1, 0.4, -0.7, -0.2, 0.9, 0.8, 0.6, -0.3, 0.1, -1.0, 0.2, 0.4, 0.7, 1.5,
      -0.2;
  Eigen::MatrixXd g;
  const double loss = RobustnessLoss(z, &g);
  EXPECT_GT(loss, 0);
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    Eigen::MatrixXd plus = z, minus = z;
    plus.data()[i] += h;
    minus.data()[i] -= h;
    const double numeric =
        (RobustnessLoss(plus, nullptr) - RobustnessLoss(minus, nullptr)) / (2 * h);
    EXPECT_NEAR(g.data()[i], numeric, 1e-6) << "entry " << i;
  }
}

TEST(RobustnessLossTest, DecorrelatedColumnsCostNothing) {
  // Centred, orthogonal columns: C = I.
  Eigen::MatrixXd z(4, 2);
  z << 1, 1, -1, 1, 1, -1, -1, -1;
  EXPECT_NEAR(RobustnessLoss(z, nullptr), 0, 1e-24);
  // Two identical columns: C = [[1,1],[1,1]], ||C - I||^2 = 2.
  z.col(1) = z.col(0);
  EXPECT_NEAR(RobustnessLoss(z, nullptr), 2, 1e-12);
}

// Two taste groups: users 0..9 like target items 0..9, users 10..19 items 10..19.
CrossDomainData TwoGroups() {
  CrossDomainData d;
  d.num_users = 20;
  d.num_source_items = 4;
  d.num_target_items = 20;
  d.source.assign(20, {});
  d.target_train.assign(20, {});
  for (int32_t u = 0; u < 20; ++u) {
    const int32_t base = u < 10 ? 0 : 10;
    d.source[u] = u < 10 ? std::vector<int32_t>{0, 1} : std::vector<int32_t>{2, 3};
    const int32_t held = base + u % 10;
    for (int32_t i = base; i < base + 10; ++i) {
      if (i != held) d.target_train[u].push_back(i);
    }
    EvalCase c{u, held, {}};
    for (int32_t j = 10 - base; j < 20 - base; ++j) c.negatives.push_back(j);
    d.test.push_back(c);
  }
  return d;
}

TEST(TargetModelTest, BprRanksTheGroupsItemsFirstAndIsDeterministic) {
  const CrossDomainData d = TwoGroups();
  TargetOptions o;
  o.dim = 4;
  o.epochs = 60;
  o.batch = 8;
  ASSERT_OK_AND_ASSIGN(TargetModel a, TrainTarget(d, nullptr, o));
  ASSERT_OK_AND_ASSIGN(TargetModel b, TrainTarget(d, nullptr, o));
  EXPECT_EQ(a.user, b.user);
  EXPECT_EQ(a.item, b.item);
  const RankingMetrics m =
      EvaluateRanking(d.test, [&](int32_t u, int32_t i) { return a.Score(u, i); });
  // The held-out item is the group's; the negatives are the other group's.
  EXPECT_DOUBLE_EQ(m.hr_at_5, 1.0);
  EXPECT_DOUBLE_EQ(m.mrr, 1.0);
  o.seed = 2;
  ASSERT_OK_AND_ASSIGN(TargetModel c, TrainTarget(d, nullptr, o));
  EXPECT_NE(a.user, c.user);
}

TEST(TargetModelTest, FakeSourceWithoutTransferWeightsIsTheBaseline) {
  const CrossDomainData d = TwoGroups();
  Eigen::MatrixXd fake = Eigen::MatrixXd::Constant(20, 4, 0.5);
  TargetOptions o;
  o.dim = 4;
  o.epochs = 5;
  ASSERT_OK_AND_ASSIGN(TargetModel base, TrainTarget(d, nullptr, o));
  ASSERT_OK_AND_ASSIGN(TargetModel same, TrainTarget(d, &fake, o));
  EXPECT_EQ(base.user, same.user);
  o.lambda_align = 1;
  o.lambda_rc = 0.1;
  ASSERT_OK_AND_ASSIGN(TargetModel transfer, TrainTarget(d, &fake, o));
  EXPECT_NE(base.user, transfer.user);
  EXPECT_TRUE(transfer.user.allFinite());
  Eigen::MatrixXd wrong(3, 4);
  EXPECT_THAT(TrainTarget(d, &wrong, o).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::cdr
