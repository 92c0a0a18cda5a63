// Building the two-player federations of `fedmf advise` and measuring the
// trade-off grid with the real simulator.
#include "common/advise/tradeoff.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <string>

#include "common/data/loaders.h"
#include "common/data/synthetic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::advise {
namespace {

using ::testing::HasSubstr;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

data::Dataset Csv(const std::string& text, const std::string& name,
                  data::RatingRange range = {1, 5}) {
  auto d = data::ParseRatings(text, data::RatingFormat::kGenericCsv, name, {range});
  EXPECT_THAT(d, IsOk());
  return *d;
}

// A: users 1, 2 over items 10, 20, 30. B: users 1, 3 over items 10, 20, 40.
data::Dataset PartyA() { return Csv("user,item,rating\n1,10,4\n1,20,3\n2,10,5\n2,30,2\n", "a"); }
data::Dataset PartyB() { return Csv("user,item,rating\n1,10,3\n3,20,4\n3,40,5\n", "b"); }

data::SplitOptions NoHoldout() {
  data::SplitOptions s;
  s.test_fraction = 0;
  return s;
}

TEST(JoinPartiesTest, HorizontalKeepsUsersApartAndJoinsItemsById) {
  ASSERT_OK_AND_ASSIGN(auto fed, JoinParties(PartyA(), PartyB(), fmf::Setting::kHfl, NoHoldout()));
  // User "1" of A and user "1" of B are different people; items join by id.
  EXPECT_EQ(fed.num_users, 4);
  EXPECT_EQ(fed.num_items, 4);
  ASSERT_EQ(fed.parties.size(), 2u);
  EXPECT_EQ(fed.parties[0].num_users(), 2);
  EXPECT_EQ(fed.parties[1].num_users(), 2);
  EXPECT_EQ(fed.parties[0].train.size(), 4u);
  EXPECT_EQ(fed.parties[1].train.size(), 3u);
  // Item 10 is rated by both parties: the same global item.
  std::set<int32_t> items0, items1;
  for (const auto& r : fed.parties[0].train) items0.insert(fed.parties[0].global_items[r.item]);
  for (const auto& r : fed.parties[1].train) items1.insert(fed.parties[1].global_items[r.item]);
  std::vector<int32_t> common;
  std::set_intersection(items0.begin(), items0.end(), items1.begin(), items1.end(),
                        std::back_inserter(common));
  EXPECT_EQ(common.size(), 2u);  // items 10 and 20
}

TEST(JoinPartiesTest, VerticalKeepsItemsApartAndJoinsUsersById) {
  ASSERT_OK_AND_ASSIGN(auto fed, JoinParties(PartyA(), PartyB(), fmf::Setting::kVfl, NoHoldout()));
  EXPECT_EQ(fed.num_users, 3);  // 1, 2, 3
  EXPECT_EQ(fed.num_items, 6);  // A's 10, 20, 30 and B's 10, 20, 40 are different columns
  EXPECT_EQ(fed.parties[0].num_items(), 3);
  EXPECT_EQ(fed.parties[1].num_items(), 3);
  EXPECT_EQ(fed.parties[0].train.size() + fed.parties[1].train.size(), 7u);
}

TEST(JoinPartiesTest, RefusesDifferentRatingRangesNamingBoth) {
  const data::Dataset b = Csv("user,item,rating\n1,10,0.5\n", "b-half", {0.5, 5});
  auto fed = JoinParties(PartyA(), b, fmf::Setting::kHfl, NoHoldout());
  ASSERT_THAT(fed, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(
      std::string(fed.status().message()),
      HasSubstr("party 1 (csv:a) declares ratings in [1, 5] but party 2 (csv:b-half) in [0.5, 5]"));
}

TEST(JoinPartiesTest, RefusesSettingsThatAreNotTwoPartyCollaborations) {
  auto fed = JoinParties(PartyA(), PartyB(), fmf::Setting::kCentral, NoHoldout());
  ASSERT_THAT(fed, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(fed.status().message()), HasSubstr("use hfl, hfl-synsgd or vfl"));
}

data::Dataset Synthetic(int users, int items, uint64_t seed) {
  data::SyntheticOptions o;
  o.num_users = users;
  o.num_items = items;
  o.density = 0.25;
  o.seed = seed;
  auto d = data::GenerateSynthetic(o);
  EXPECT_THAT(d, IsOk());
  return *d;
}

TEST(ProxyFederationTest, HasThePartiesShapeAndNoneOfTheirRatings) {
  const data::Dataset a = Synthetic(40, 30, 1), b = Synthetic(20, 30, 2);
  data::SplitOptions split = NoHoldout();
  ASSERT_OK_AND_ASSIGN(auto fed, ProxyFederation(a, b, fmf::Setting::kHfl, split, 7));
  EXPECT_EQ(fed.parties[0].num_users(), 40);
  EXPECT_EQ(fed.parties[1].num_users(), 20);
  EXPECT_EQ(fed.num_items, 30);
  const size_t total = fed.parties[0].train.size() + fed.parties[1].train.size();
  EXPECT_NEAR(static_cast<double>(total), static_cast<double>(a.ratings.size() + b.ratings.size()),
              2.0);
}

MeasureOptions SmallJob(fmf::Setting setting) {
  MeasureOptions o;
  fmf::JobConfig& c = o.job;
  c.setting = setting;
  c.split = setting == fmf::Setting::kVfl ? fmf::SplitKind::kVertical : fmf::SplitKind::kHorizontal;
  c.granularity = fmf::DefaultGranularity(setting);
  c.rounds = 4;
  c.local_iters = 3;
  c.dim = 4;
  c.sample_rate = 0.1;
  c.vfl_finetune_iters = 5;
  c.pretrain_epochs = 3;
  c.finetune_epochs = 3;
  c.central_epochs = 10;
  c.rating_max = 5;
  c.seed = 5;
  o.epsilons = {2.0};
  return o;
}

TEST(MeasureTradeoffTest, MeasuresEveryCellWithEachPartyAtItsOwnEpsilon) {
  ASSERT_OK_AND_ASSIGN(
      auto fed, SelfDivision(Synthetic(80, 40, 3), fmf::Setting::kHfl, data::SplitOptions{}));
  int calls = 0;
  auto m =
      MeasureTradeoff(fed, SmallJob(fmf::Setting::kHfl), [&](const CellRun&, int done, int total) {
        ++calls;
        EXPECT_EQ(done, calls);
        EXPECT_EQ(total, 5);
      });
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(calls, 5);
  ASSERT_EQ(m->table.actions.size(), 3u);
  EXPECT_EQ(ActionLabel(m->table.actions[0]), "inf");
  EXPECT_EQ(ActionLabel(m->table.actions[1]), "2");
  EXPECT_EQ(ActionLabel(m->table.actions[2]), "alone");
  ASSERT_EQ(m->runs.size(), 5u);
  // Cell (inf, 2): party 1 adds no noise, party 2 spends at most its 2.
  const CellRun& mixed = m->runs[1];
  EXPECT_TRUE(std::isinf(mixed.epsilon_spent[0]));
  EXPECT_GT(mixed.epsilon_spent[1], 0.5);
  EXPECT_LE(mixed.epsilon_spent[1], 2.0 + 1e-6);
  const CellRun& both = m->runs[3];
  EXPECT_LE(both.epsilon_spent[0], 2.0 + 1e-6);
  EXPECT_LE(both.epsilon_spent[1], 2.0 + 1e-6);
  // An inf cell releases without noise: the grid's cost is unbounded.
  EXPECT_TRUE(std::isinf(m->total_epsilon[0]));
  for (int n = 0; n < 2; ++n) {
    EXPECT_GT(m->table.alone_error[n], 0.1);
    EXPECT_LT(m->table.alone_error[n], 3.0);
    for (size_t i = 0; i < 2; ++i) {
      for (size_t j = 0; j < 2; ++j) {
        EXPECT_TRUE(std::isfinite(m->table.error[n][i][j]));
        EXPECT_GT(m->table.error[n][i][j], 0.1);
      }
    }
  }
  // The table feeds the game as it is.
  EXPECT_THAT(CoLGame::Create(m->table, {1, 0.1}, {1, 0.1}), IsOk());
}

TEST(MeasureTradeoffTest, SameSeedSameTable) {
  ASSERT_OK_AND_ASSIGN(
      auto fed, SelfDivision(Synthetic(60, 30, 4), fmf::Setting::kVfl, data::SplitOptions{}));
  auto a = MeasureTradeoff(fed, SmallJob(fmf::Setting::kVfl));
  auto b = MeasureTradeoff(fed, SmallJob(fmf::Setting::kVfl));
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  for (int n = 0; n < 2; ++n) {
    EXPECT_EQ(a->table.error[n], b->table.error[n]);
    EXPECT_EQ(a->table.alone_error[n], b->table.alone_error[n]);
  }
}

TEST(MeasureTradeoffTest, RejectsBadGrids) {
  ASSERT_OK_AND_ASSIGN(
      auto fed, SelfDivision(Synthetic(60, 30, 4), fmf::Setting::kHfl, data::SplitOptions{}));
  MeasureOptions o = SmallJob(fmf::Setting::kHfl);
  o.epsilons = {};
  EXPECT_THAT(std::string(MeasureTradeoff(fed, o).status().message()), HasSubstr("grid is empty"));
  o.epsilons = {-1};
  EXPECT_THAT(std::string(MeasureTradeoff(fed, o).status().message()),
              HasSubstr("grid epsilon -1 must be finite and > 0"));
}

TEST(CombineOwnViewsTest, TakesEachPlayersOwnRows) {
  TradeoffTable a, b;
  a.actions = b.actions = {{false, kInfinity}, {true, 0}};
  a.alone_error[0] = 1.0;
  a.alone_error[1] = 9.0;
  b.alone_error[0] = 9.0;
  b.alone_error[1] = 2.0;
  a.error[0] = {{0.5, 0}, {0, 0}};
  a.error[1] = {{9, 0}, {0, 0}};
  b.error[0] = {{9, 0}, {0, 0}};
  b.error[1] = {{0.7, 0}, {0, 0}};
  ASSERT_OK_AND_ASSIGN(auto t, CombineOwnViews(a, b));
  EXPECT_EQ(t.alone_error[0], 1.0);
  EXPECT_EQ(t.alone_error[1], 2.0);
  EXPECT_EQ(t.error[0][0][0], 0.5);
  EXPECT_EQ(t.error[1][0][0], 0.7);
  b.actions[0] = {false, 3};
  EXPECT_THAT(CombineOwnViews(a, b), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::advise
