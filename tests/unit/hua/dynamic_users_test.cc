// S3: the initialization phase and users vanishing mid-iteration.
#include <gtest/gtest.h>

#include <vector>

#include "common/hua/dynamics.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/hua/world.h"

using ::fedmf::testing::IsOk;

namespace fedmf::hua {
namespace {

using testing::MakeWorld;
using testing::RunInit;
using testing::RunMaskedIteration;
using testing::SmallRatings;

constexpr int32_t kDynamicItems = 4;
constexpr int32_t kDynamicDim = 5;
const std::vector<int32_t> kAll = {0, 1, 2, 3, 4, 5};

std::unique_ptr<testing::World> InitializedWorld(uint64_t seed) {
  auto w = MakeWorld(Scenario::kDynamic, seed, SmallRatings(), kDynamicItems, kDynamicDim, 0.8);
  if (w == nullptr || !RunInit(*w, kAll).ok()) return nullptr;
  return w;
}

// User 2 (items 1, 2, 3) downloads its masks and tau^ shares and vanishes.
// The third party withholds those items' sums, the recommender re-splits
// tau^_j among the others, and v(t) is exactly what it would have been had
// user 2 never been selected.
TEST(DynamicUsers, DisconnectMidIterationEqualsNeverSelected) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto dropped = InitializedWorld(seed);
    auto never = InitializedWorld(seed);
    ASSERT_NE(dropped, nullptr);
    ASSERT_NE(never, nullptr);
    ASSERT_THAT(RunMaskedIteration(*dropped, kAll, {2}), IsOk());
    ASSERT_THAT(RunMaskedIteration(*never, {0, 1, 3, 4, 5}, {}), IsOk());
    const mf::Matrix& a = dropped->server->item_profiles();
    const mf::Matrix& b = never->server->item_profiles();
    for (int32_t j = 0; j < kDynamicItems; ++j) {
      for (int32_t l = 0; l < kDynamicDim; ++l) EXPECT_EQ(a(j, l), b(j, l)) << "item " << j;
    }
    for (int32_t i : {0, 1, 3, 4, 5}) {
      const auto ua = dropped->users[i].profile();
      const auto ub = never->users[i].profile();
      EXPECT_TRUE(std::equal(ua.begin(), ua.end(), ub.begin())) << "user " << i;
    }
    // And the next iteration goes on normally, with user 2 back online.
    EXPECT_THAT(RunMaskedIteration(*dropped, kAll, {}), IsOk());
  }
}

TEST(DynamicUsers, RepairPassTellsTheRecommenderWhoVanished) {
  auto w = InitializedWorld(4);
  auto round = w->server->StartIteration(kAll);
  ASSERT_OK_AND_ASSIGN(auto repair, testing::RunMaskedPass(*w, *round, {2}));
  std::set<int32_t> items;
  for (const PlannedItem& p : repair.plan.items) {
    items.insert(p.item);
    EXPECT_EQ(std::count(p.users.begin(), p.users.end(), 2), 0);
  }
  EXPECT_EQ(items, (std::set<int32_t>{1, 2, 3}));
  ASSERT_OK_AND_ASSIGN(auto done, testing::RunMaskedPass(*w, repair, {}));
  EXPECT_TRUE(done.requests.empty());
  ASSERT_OK_AND_ASSIGN(auto stats, w->server->FinishIteration());
  EXPECT_EQ(stats.passes, 2);
  EXPECT_EQ(stats.dropped_users, 1);
  EXPECT_EQ(stats.items_updated, kDynamicItems);
}

TEST(DynamicUsers, ItemWhoseUsersAllVanishKeepsItsProfile) {
  auto w = InitializedWorld(5);
  const mf::Matrix before = w->server->item_profiles();
  // Only users 0 and 1 take part; both vanish. Items 0, 1, 2, 3 all lose
  // every contributor this iteration.
  ASSERT_THAT(RunMaskedIteration(*w, {0, 1}, {0, 1}), IsOk());
  EXPECT_EQ(w->server->item_profiles(), before);
}

// tau^_j stays padded by the third party's alpha_j: the recommender cannot
// decode eta_j from it.
TEST(DynamicUsers, KeptTauHatDoesNotRevealEta) {
  auto w = InitializedWorld(6);
  for (int32_t j = 0; j < kDynamicItems; ++j) {
    ASSERT_NE(w->server->tau_hat(j), nullptr);
    EXPECT_EQ(w->codec->DecodeSum(*w->server->tau_hat(j), 4).status().code(),
              absl::StatusCode::kDataLoss);
  }
}

TEST(DynamicUsers, ItemsWithoutOnlineRatersAreInitializedLater) {
  auto w = MakeWorld(Scenario::kDynamic, 7, SmallRatings(), kDynamicItems, kDynamicDim, 0.8);
  ASSERT_TRUE(RunInit(*w, {5}).ok());  // user 5 rated items 1, 2
  EXPECT_FALSE(w->server->initialized(0));
  EXPECT_TRUE(w->server->initialized(1));
  EXPECT_TRUE(w->server->initialized(2));
  EXPECT_EQ(w->server->uninitialized_items(), 2);
  // Iterations only involve initialized items.
  ASSERT_OK_AND_ASSIGN(auto round, w->server->StartIteration({1, 5}));
  for (const IterationRequest& req : round.requests) {
    for (const ItemRequest& it : req.items) EXPECT_TRUE(it.item == 1 || it.item == 2);
  }
  auto next = testing::RunMaskedPass(*w, round, {});
  ASSERT_THAT(next, IsOk());
  ASSERT_THAT(w->server->FinishIteration(), IsOk());
  ASSERT_TRUE(RunInit(*w, {1}).ok());  // user 1 rated 0, 2, 3
  EXPECT_EQ(w->server->uninitialized_items(), 0);
}

TEST(DynamicUsers, InitWithAVanishedUserIsRetried) {
  auto w = MakeWorld(Scenario::kDynamic, 8, SmallRatings(), kDynamicItems, kDynamicDim, 0.8);
  ASSERT_OK_AND_ASSIGN(auto round, w->server->StartInit(kAll));
  ASSERT_THAT(w->tp->Begin(round.plan), IsOk());
  for (const InitRequest& req : round.requests) {
    if (req.user == 5) continue;  // rated items 1, 2
    ASSERT_THAT(w->tp->Accept(*w->users[req.user].HandleInit(req)), IsOk());
  }
  ASSERT_OK_AND_ASSIGN(auto forward, w->tp->Flush());
  EXPECT_EQ(forward.incomplete_items, (std::vector<int32_t>{1, 2}));
  ASSERT_THAT(w->server->FinishInit(forward), IsOk());
  EXPECT_TRUE(w->server->initialized(0));
  EXPECT_FALSE(w->server->initialized(1));
  EXPECT_THAT(RunInit(*w, {0, 2, 3, 4}), IsOk());
  EXPECT_EQ(w->server->uninitialized_items(), 0);
}

TEST(OnlinePool, JoinLeaveAndSelection) {
  std::vector<int32_t> users(1000);
  for (int32_t i = 0; i < 1000; ++i) users[i] = i;
  OnlinePool pool(users, 1.0 / 3, 0.005, 0.01, random::Csprng::FromSeed(1));
  const size_t start = pool.Online().size();
  EXPECT_NEAR(static_cast<double>(start), 333, 60);
  const std::vector<int32_t> pick = pool.Select(100);
  EXPECT_EQ(pick.size(), 100u);
  EXPECT_TRUE(std::is_sorted(pick.begin(), pick.end()));
  pool.Disconnect(pick[0]);
  EXPECT_EQ(pool.Online().size(), start - 1);
  for (int t = 0; t < 200; ++t) pool.Step();
  // The chain's stationary fraction is 0.005 / 0.015 = 1/3.
  EXPECT_NEAR(static_cast<double>(pool.Online().size()), 333, 80);
}

}  // namespace
}  // namespace fedmf::hua
