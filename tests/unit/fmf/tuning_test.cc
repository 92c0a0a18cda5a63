// --tune's pure part: the proxy has the federation's public shape and nothing
// else of it, and the grid's winner is the proxy's best.
#include "common/fmf/tuning.h"

#include <algorithm>
#include <limits>

#include "common/data/synthetic.h"
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

data::Federation Real(uint64_t seed, bool scramble_values) {
  data::SyntheticOptions o;
  o.num_users = 90;
  o.num_items = 50;
  o.density = 0.2;
  o.seed = seed;
  auto d = data::GenerateSynthetic(o);
  EXPECT_THAT(d, IsOk());
  if (scramble_values) {
    random::Csprng rng = random::Csprng::FromSeed(99);
    for (data::Rating& r : d->ratings) r.value = static_cast<float>(1 + rng.UniformInt(5));
  }
  FederationOptions fed;
  fed.parties = 3;
  auto f = BuildFederation(SmallHfl(), *std::move(d), fed);
  EXPECT_THAT(f, IsOk());
  return *std::move(f);
}

int64_t Count(const data::Federation& f) {
  int64_t n = 0;
  for (const auto& p : f.parties) n += static_cast<int64_t>(p.train.size() + p.test.size());
  return n;
}

TEST(TuningTest, TheProxyHasTheShapeAndNothingElse) {
  const data::Federation real = Real(1, false);
  auto proxy = ProxyOfShape(real, SmallHfl(), 7);
  ASSERT_THAT(proxy, IsOk());
  EXPECT_EQ(proxy->num_users, real.num_users);
  EXPECT_EQ(proxy->num_items, real.num_items);
  EXPECT_EQ(proxy->parties.size(), real.parties.size());
  EXPECT_EQ(proxy->range.min, real.range.min);
  EXPECT_EQ(proxy->range.max, real.range.max);
  EXPECT_NEAR(static_cast<double>(Count(*proxy)), static_cast<double>(Count(real)),
              0.02 * static_cast<double>(Count(real)));
  // The same shape with other rating values: the very same proxy, so the
  // choice cannot depend on the ratings.
  auto again = ProxyOfShape(Real(1, true), SmallHfl(), 7);
  ASSERT_THAT(again, IsOk());
  for (size_t k = 0; k < proxy->parties.size(); ++k) {
    ASSERT_EQ(proxy->parties[k].train.size(), again->parties[k].train.size());
    for (size_t r = 0; r < proxy->parties[k].train.size(); ++r) {
      ASSERT_EQ(proxy->parties[k].train[r].value, again->parties[k].train[r].value);
    }
  }
}

TEST(TuningTest, PicksTheProxysBestAndReportsTheGrid) {
  const data::Federation real = Real(2, false);
  auto proxy = ProxyOfShape(real, SmallHfl(), 5);
  ASSERT_THAT(proxy, IsOk());
  const std::vector<double> grid = LearningRateGrid(SmallHfl());
  ASSERT_EQ(grid.front(), 0);  // the noise-aware rule is a candidate (per-user clipping)
  auto tuned = TuneLearningRateOnProxy(SmallHfl(), *proxy, grid, /*max_doublings=*/0);
  ASSERT_THAT(tuned, IsOk());
  ASSERT_EQ(tuned->grid.size(), grid.size());
  const auto best = std::min_element(tuned->grid.begin(), tuned->grid.end(),
                                     [](const TuneCandidate& a, const TuneCandidate& b) {
                                       return a.proxy_test_mse < b.proxy_test_mse;
                                     });
  EXPECT_EQ(tuned->learning_rate, best->learning_rate);
  // Each candidate is the job at that rate on the proxy.
  JobConfig at = SmallHfl();
  at.learning_rate = grid[2];
  auto run = Simulate(at, *proxy);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(tuned->grid[2].proxy_test_mse, run->test.mse);
  EXPECT_THAT(TuneLearningRateOnProxy(SmallHfl(), *proxy, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// A best rate at the grid's top edge: the grid goes on doubling while the
// top keeps winning, and stops at the first double that does not.
TEST(TuningTest, ExtendsTheGridUpWhileItsTopWins) {
  const data::Federation real = Real(2, false);
  auto proxy = ProxyOfShape(real, SmallHfl(), 5);
  ASSERT_THAT(proxy, IsOk());
  // Rates far too small for this job: the largest of them wins.
  auto tuned = TuneLearningRateOnProxy(SmallHfl(), *proxy, {0.0005, 0.001}, 3);
  ASSERT_THAT(tuned, IsOk());
  ASSERT_GT(tuned->grid.size(), 2u);
  EXPECT_EQ(tuned->grid[2].learning_rate, 0.002);
  for (size_t k = 3; k < tuned->grid.size(); ++k) {
    EXPECT_EQ(tuned->grid[k].learning_rate, 2 * tuned->grid[k - 1].learning_rate);
  }
  EXPECT_LE(tuned->grid.size(), 5u);
  // It stopped at the cap, or because the last double lost or gained < 0.1%.
  if (tuned->grid.size() < 5u) {
    const TuneCandidate& last = tuned->grid.back();
    const TuneCandidate& before = tuned->grid[tuned->grid.size() - 2];
    EXPECT_GE(last.proxy_test_mse, before.proxy_test_mse * (1 - 1e-3));
  }
  const auto best = std::min_element(tuned->grid.begin(), tuned->grid.end(),
                                     [](const TuneCandidate& a, const TuneCandidate& b) {
                                       return a.proxy_test_mse < b.proxy_test_mse;
                                     });
  EXPECT_EQ(tuned->learning_rate, best->learning_rate);
}

TEST(TuningTest, GridAroundTheSettingsRate) {
  JobConfig vfl;
  vfl.setting = Setting::kVfl;
  vfl.split = SplitKind::kVertical;
  EXPECT_EQ(LearningRateGrid(vfl), (std::vector<double>{0.0375, 0.075, 0.15, 0.3, 0.6}));
}

}  // namespace
}  // namespace fedmf::fmf
