// --tune's pure part: the proxy has a declared shape and nothing of the data
// (issue #54: not even its rating count), and the grid's winner is the
// proxy's best.
#include "common/fmf/tuning.h"

#include <algorithm>
#include <limits>

#include "common/fmf/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::fmf {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

JobConfig SmallHfl() {
  JobConfig c;
  c.setting = Setting::kHfl;
  c.split = SplitKind::kHorizontal;
  c.rounds = 4;
  c.local_iters = 2;
  c.dim = 4;
  c.sample_rate = 0.2;
  c.epsilon = 4;
  c.pretrain_epochs = 2;
  c.max_finetune_epochs = 3;
  c.seed = 3;
  return c;
}

int64_t Count(const data::Federation& f) {
  int64_t n = 0;
  for (const auto& p : f.parties) n += static_cast<int64_t>(p.train.size() + p.test.size());
  return n;
}

// Public sizes an operator declares (as a published data set's).
constexpr ProxyShape kDeclared{90, 50, 900};

absl::StatusOr<data::Federation> Proxy(uint64_t seed) {
  return ProxyOfShape(kDeclared, {1, 5}, 3, SmallHfl(), seed);
}

TEST(TuningTest, TheProxyHasTheDeclaredShapeAndNothingElse) {
  auto proxy = Proxy(7);
  ASSERT_THAT(proxy, IsOk());
  EXPECT_EQ(proxy->num_users, kDeclared.users);
  EXPECT_EQ(proxy->num_items, kDeclared.items);
  EXPECT_EQ(proxy->parties.size(), 3u);
  EXPECT_EQ(proxy->range.min, 1);
  EXPECT_EQ(proxy->range.max, 5);
  EXPECT_NEAR(static_cast<double>(Count(*proxy)), static_cast<double>(kDeclared.ratings),
              0.05 * static_cast<double>(kDeclared.ratings));
  // The proxy is a function of the declared shape, the job and the seed:
  // the same call gives the very same ratings (it takes no data at all).
  ASSERT_OK_AND_ASSIGN(auto again, Proxy(7));
  for (size_t k = 0; k < proxy->parties.size(); ++k) {
    ASSERT_EQ(proxy->parties[k].train.size(), again.parties[k].train.size());
    for (size_t r = 0; r < proxy->parties[k].train.size(); ++r) {
      ASSERT_EQ(proxy->parties[k].train[r].value, again.parties[k].train[r].value);
    }
  }
}

TEST(TuningTest, TheShapeIsParsedAndBadOnesAreNamed) {
  ASSERT_OK_AND_ASSIGN(auto shape, ParseProxyShape("users=943,items=1682,ratings=100000"));
  EXPECT_EQ(shape.users, 943);
  EXPECT_EQ(shape.items, 1682);
  EXPECT_EQ(shape.ratings, 100000);
  EXPECT_THAT(ParseProxyShape("users=943,items=1682"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("misses ratings")));
  EXPECT_THAT(ParseProxyShape("users=943,items=0,ratings=5"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("items=0")));
  EXPECT_THAT(ParseProxyShape("users=9,colour=1,ratings=5"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("colour")));
}

TEST(TuningTest, PicksTheProxysBestAndReportsTheGrid) {
  auto proxy = Proxy(5);
  ASSERT_THAT(proxy, IsOk());
  const std::vector<double> grid = LearningRateGrid(SmallHfl());
  ASSERT_EQ(grid.front(), 0);  // the noise-aware rule is a candidate (per-user clipping)
  ASSERT_OK_AND_ASSIGN(auto tuned,
                       TuneLearningRateOnProxy(SmallHfl(), *proxy, grid, /*max_doublings=*/0));
  ASSERT_EQ(tuned.grid.size(), grid.size());
  const auto best = std::min_element(tuned.grid.begin(), tuned.grid.end(),
                                     [](const TuneCandidate& a, const TuneCandidate& b) {
                                       return a.proxy_test_mse < b.proxy_test_mse;
                                     });
  EXPECT_EQ(tuned.learning_rate, best->learning_rate);
  // Each candidate is the job at that rate on the proxy.
  JobConfig at = SmallHfl();
  at.learning_rate = grid[2];
  ASSERT_OK_AND_ASSIGN(auto run, Simulate(at, *proxy));
  EXPECT_EQ(tuned.grid[2].proxy_test_mse, run.test.mse);
  EXPECT_THAT(TuneLearningRateOnProxy(SmallHfl(), *proxy, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// A best rate at the grid's top edge: the grid goes on doubling while the
// top keeps winning, and stops at the first double that does not.
TEST(TuningTest, ExtendsTheGridUpWhileItsTopWins) {
  ASSERT_OK_AND_ASSIGN(auto proxy, Proxy(5));
  // Rates far too small for this job: the largest of them wins.
  ASSERT_OK_AND_ASSIGN(auto tuned, TuneLearningRateOnProxy(SmallHfl(), proxy, {0.0005, 0.001}, 3));
  ASSERT_GT(tuned.grid.size(), 2u);
  EXPECT_EQ(tuned.grid[2].learning_rate, 0.002);
  for (size_t k = 3; k < tuned.grid.size(); ++k) {
    EXPECT_EQ(tuned.grid[k].learning_rate, 2 * tuned.grid[k - 1].learning_rate);
  }
  EXPECT_LE(tuned.grid.size(), 5u);
  // It stopped at the cap, or because the last double lost or gained < 0.1%.
  if (tuned.grid.size() < 5u) {
    const TuneCandidate& last = tuned.grid.back();
    const TuneCandidate& before = tuned.grid[tuned.grid.size() - 2];
    EXPECT_GE(last.proxy_test_mse, before.proxy_test_mse * (1 - 1e-3));
  }
  const auto best = std::min_element(tuned.grid.begin(), tuned.grid.end(),
                                     [](const TuneCandidate& a, const TuneCandidate& b) {
                                       return a.proxy_test_mse < b.proxy_test_mse;
                                     });
  EXPECT_EQ(tuned.learning_rate, best->learning_rate);
}

TEST(TuningTest, GridAroundTheSettingsRate) {
  JobConfig vfl;
  vfl.setting = Setting::kVfl;
  vfl.split = SplitKind::kVertical;
  EXPECT_EQ(LearningRateGrid(vfl), (std::vector<double>{0.0375, 0.075, 0.15, 0.3, 0.6}));
}

}  // namespace
}  // namespace fedmf::fmf
