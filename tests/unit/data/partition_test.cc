#include "common/data/partition.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <vector>

#include "common/data/synthetic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Dataset SmallDataset() {
  SyntheticOptions o;
  o.num_users = 60;
  o.num_items = 40;
  o.density = 0.2;
  o.seed = 11;
  auto d = GenerateSynthetic(o);
  EXPECT_THAT(d, IsOk());
  return *d;
}

std::vector<int32_t> Iota(int32_t n) {
  std::vector<int32_t> v(n);
  for (int32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

using Triple = std::tuple<int32_t, int32_t, float>;

std::vector<Triple> Sorted(std::vector<Triple> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// The invariants every partition must satisfy. `by_user`: parties own users
// (HFL/LFL/central) rather than items (VFL).
void ExpectValidFederation(const Federation& fed, const Dataset& d, bool by_user,
                           double test_fraction) {
  EXPECT_EQ(fed.num_users, d.num_users);
  EXPECT_EQ(fed.num_items, d.num_items);
  std::vector<int> owners(by_user ? d.num_users : d.num_items, 0);
  std::vector<Triple> all;
  for (size_t k = 0; k < fed.parties.size(); ++k) {
    const PartyData& p = fed.parties[k];
    EXPECT_EQ(p.party, static_cast<int32_t>(k));
    EXPECT_EQ(p.range.max, d.range.max);
    const IndexMap& owned = by_user ? p.global_users : p.global_items;
    const IndexMap& shared = by_user ? p.global_items : p.global_users;
    EXPECT_EQ(shared, Iota(by_user ? d.num_items : d.num_users)) << "party " << k;
    EXPECT_FALSE(owned.empty()) << "party " << k << " owns nothing";
    EXPECT_TRUE(std::is_sorted(owned.begin(), owned.end()));
    for (int32_t e : owned) ++owners[e];
    // Per-party split: exactly round(test_fraction * count) held out.
    const size_t count = p.train.size() + p.test.size();
    EXPECT_EQ(p.test.size(), static_cast<size_t>(std::llround(test_fraction * count)))
        << "party " << k;
    for (const auto* part : {&p.train, &p.test}) {
      for (const Rating& r : *part) {
        // Local indices, mapped back through the party's global lists.
        ASSERT_GE(r.user, 0);
        ASSERT_LT(r.user, p.num_users());
        ASSERT_GE(r.item, 0);
        ASSERT_LT(r.item, p.num_items());
        all.emplace_back(p.global_users[r.user], p.global_items[r.item], r.value);
      }
    }
  }
  // Owned axis: every user/item belongs to exactly one party.
  EXPECT_EQ(std::count(owners.begin(), owners.end(), 1), static_cast<long>(owners.size()));
  // Ratings: the parties' train+test sets are exactly the dataset (coverage
  // and disjointness, and the local indices are right).
  std::vector<Triple> expected;
  for (const Rating& r : d.ratings) expected.emplace_back(r.user, r.item, r.value);
  EXPECT_EQ(Sorted(all), Sorted(expected));
}

bool SameFederation(const Federation& a, const Federation& b) {
  if (a.parties.size() != b.parties.size()) return false;
  for (size_t k = 0; k < a.parties.size(); ++k) {
    const PartyData& x = a.parties[k];
    const PartyData& y = b.parties[k];
    if (x.global_users != y.global_users || x.global_items != y.global_items ||
        x.train != y.train || x.test != y.test) {
      return false;
    }
  }
  return true;
}

TEST(DataPartitionTest, VflRandom) {
  const Dataset d = SmallDataset();
  ASSERT_OK_AND_ASSIGN(auto fed, PartitionVflRandom(d, 4, {0.1, 5}));
  ASSERT_EQ(fed.parties.size(), 4u);
  ExpectValidFederation(fed, d, /*by_user=*/false, 0.1);
}

TEST(DataPartitionTest, VflRandomAsManyPartiesAsItems) {
  const Dataset d = SmallDataset();
  ASSERT_OK_AND_ASSIGN(auto fed, PartitionVflRandom(d, d.num_items, {0.1, 5}));
  for (const PartyData& p : fed.parties) EXPECT_EQ(p.num_items(), 1);
  ExpectValidFederation(fed, d, false, 0.1);
}

TEST(DataPartitionTest, VflRandomDeterministicInSeedAndDifferentAcrossSeeds) {
  const Dataset d = SmallDataset();
  auto a = PartitionVflRandom(d, 3, {0.1, 5});
  auto b = PartitionVflRandom(d, 3, {0.1, 5});
  auto c = PartitionVflRandom(d, 3, {0.1, 6});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(SameFederation(*a, *b));
  EXPECT_FALSE(SameFederation(*a, *c));
  EXPECT_NE(a->parties[0].global_items, c->parties[0].global_items);
}

TEST(DataPartitionTest, Hfl) {
  const Dataset d = SmallDataset();
  ASSERT_OK_AND_ASSIGN(auto fed, PartitionHfl(d, 5, {0.1, 9}));
  ASSERT_EQ(fed.parties.size(), 5u);
  ExpectValidFederation(fed, d, /*by_user=*/true, 0.1);
}

TEST(DataPartitionTest, HflDeterministicInSeedAndDifferentAcrossSeeds) {
  const Dataset d = SmallDataset();
  auto a = PartitionHfl(d, 3, {0.1, 9});
  auto b = PartitionHfl(d, 3, {0.1, 9});
  auto c = PartitionHfl(d, 3, {0.1, 10});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(SameFederation(*a, *b));
  EXPECT_NE(a->parties[0].global_users, c->parties[0].global_users);
}

TEST(DataPartitionTest, LflIsOnePartyPerUser) {
  const Dataset d = SmallDataset();
  ASSERT_OK_AND_ASSIGN(auto fed, PartitionLfl(d, {0.1, 1}));
  ASSERT_EQ(fed.parties.size(), static_cast<size_t>(d.num_users));
  for (size_t k = 0; k < fed.parties.size(); ++k) {
    EXPECT_THAT(fed.parties[k].global_users, ElementsAre(static_cast<int32_t>(k)));
    // Every device's catalogue is the identity and stores no array (at
    // 70,000 devices x 10,000 items the arrays were 2.8 GB).
    EXPECT_TRUE(fed.parties[k].global_items.is_identity()) << "device " << k;
  }
  ExpectValidFederation(fed, d, true, 0.1);
}

TEST(DataPartitionTest, CentralIsOnePartyWithIdentityIndices) {
  const Dataset d = SmallDataset();
  ASSERT_OK_AND_ASSIGN(auto fed, PartitionCentral(d, {0.1, 1}));
  ASSERT_EQ(fed.parties.size(), 1u);
  EXPECT_EQ(fed.parties[0].global_users, Iota(d.num_users));
  EXPECT_EQ(fed.parties[0].test.size(), static_cast<size_t>(std::llround(0.1 * d.ratings.size())));
  ExpectValidFederation(fed, d, true, 0.1);
}

// Consuming the dataset builds the same federation in the dataset's own
// storage (the central run never holds its ratings twice).
TEST(DataPartitionTest, CentralFromAConsumedDatasetIsTheSameFederation) {
  const Dataset d = SmallDataset();
  ASSERT_OK_AND_ASSIGN(auto kept, PartitionCentral(d, {0.1, 3}));
  Dataset copy = d;
  const Rating* storage = copy.ratings.data();
  ASSERT_OK_AND_ASSIGN(auto consumed, PartitionCentral(std::move(copy), {0.1, 3}));
  ASSERT_EQ(consumed.parties.size(), 1u);
  EXPECT_EQ(consumed.parties[0].train, kept.parties[0].train);
  EXPECT_EQ(consumed.parties[0].test, kept.parties[0].test);
  EXPECT_EQ(consumed.parties[0].global_users, kept.parties[0].global_users);
  EXPECT_EQ(consumed.parties[0].global_items, kept.parties[0].global_items);
  EXPECT_EQ(consumed.parties[0].train.data(), storage);  // no copy was made
}

TEST(DataPartitionTest, SplitIsDeterministicInSeedAndDifferentAcrossSeeds) {
  const Dataset d = SmallDataset();
  auto a = PartitionCentral(d, {0.1, 1});
  auto b = PartitionCentral(d, {0.1, 1});
  auto c = PartitionCentral(d, {0.1, 2});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->parties[0].test, b->parties[0].test);
  EXPECT_NE(a->parties[0].test, c->parties[0].test);
}

TEST(DataPartitionTest, OtherTestFractions) {
  const Dataset d = SmallDataset();
  for (double f : {0.0, 0.25, 0.5, 0.9}) {
    ASSERT_OK_AND_ASSIGN(auto fed, PartitionHfl(d, 4, {f, 3}));
    ExpectValidFederation(fed, d, true, f);
  }
}

TEST(DataPartitionTest, RejectsBadArguments) {
  const Dataset d = SmallDataset();
  auto msg = [](const absl::StatusOr<Federation>& f) {
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(f.status().message());
  };
  EXPECT_THAT(msg(PartitionVflRandom(d, 0, {})), HasSubstr("needs at least 1 party"));
  EXPECT_THAT(msg(PartitionVflRandom(d, 41, {})),
              HasSubstr("41 parties but the dataset has only 40 items"));
  EXPECT_THAT(msg(PartitionHfl(d, -2, {})), HasSubstr("needs at least 1 party, got -2"));
  EXPECT_THAT(msg(PartitionHfl(d, 61, {})), HasSubstr("only 60 users"));
  EXPECT_THAT(msg(PartitionCentral(d, {1.0, 1})), HasSubstr("test_fraction 1 must be in [0, 1)"));
  EXPECT_THAT(msg(PartitionLfl(d, {-0.1, 1})), HasSubstr("must be in [0, 1)"));
  EXPECT_THAT(msg(PartitionCentral(d, {std::nan(""), 1})), HasSubstr("must be in [0, 1)"));
  EXPECT_THAT(msg(PartitionCentral(Dataset{}, {})), HasSubstr("is empty"));
  Dataset broken = d;
  broken.ratings.push_back({d.num_users, 0, 3.0f});
  EXPECT_THAT(msg(PartitionCentral(broken, {})), HasSubstr("is outside 60 users x 40 items"));
}

// Six items; genre sizes: g0=1 (item 3, no flag), g1=3, g2=2, g3=3, g4=1.
const std::vector<std::vector<int>> kItemGenres = {
    {1, 2},  // item 0 -> 2 (2 items < 3)
    {1},     // item 1 -> 1
    {3, 2},  // item 2 -> 2
    {},      // item 3 -> 0 (unknown)
    {1, 3},  // item 4 -> 1 (tie 3 = 3: lowest id)
    {3, 4},  // item 5 -> 4; genre 3 ends up empty and is dropped
};

TEST(DataPartitionTest, SmallestGenreRule) {
  ASSERT_OK_AND_ASSIGN(auto genre, AssignItemsToSmallestGenre(kItemGenres));
  EXPECT_THAT(genre, ElementsAre(2, 1, 2, 0, 1, 4));
}

TEST(DataPartitionTest, VflByGenre) {
  // Every user rates every item once.
  Dataset d;
  d.num_users = 4;
  d.num_items = 6;
  d.range = {1, 5};
  for (int32_t u = 0; u < 4; ++u) {
    for (int32_t i = 0; i < 6; ++i)
      d.ratings.push_back({u, i, static_cast<float>(1 + (u + i) % 5)});
  }
  ASSERT_OK_AND_ASSIGN(auto fed, PartitionVflByGenre(d, kItemGenres, {0.25, 1}));
  // Parties in genre order 0, 1, 2, 4 (genre 3 is empty).
  ASSERT_EQ(fed.parties.size(), 4u);
  EXPECT_THAT(fed.parties[0].global_items, ElementsAre(3));
  EXPECT_THAT(fed.parties[1].global_items, ElementsAre(1, 4));
  EXPECT_THAT(fed.parties[2].global_items, ElementsAre(0, 2));
  EXPECT_THAT(fed.parties[3].global_items, ElementsAre(5));
  ExpectValidFederation(fed, d, /*by_user=*/false, 0.25);
  ASSERT_OK_AND_ASSIGN(auto again, PartitionVflByGenre(d, kItemGenres, {0.25, 1}));
  EXPECT_TRUE(SameFederation(fed, again));
}

TEST(DataPartitionTest, VflByGenreRejectsMismatchedGenres) {
  const Dataset d = SmallDataset();
  auto fed = PartitionVflByGenre(d, kItemGenres, {});
  EXPECT_THAT(std::string(fed.status().message()),
              HasSubstr("genre list has 6 entries but the dataset has 40 items"));
  EXPECT_THAT(AssignItemsToSmallestGenre({{-1}}), StatusIs(absl::StatusCode::kInvalidArgument));
}

// The per-user validation split: round(f * n_u) of each user's ratings (at
// most n_u - 1), and removing one user leaves every other user's split
// exactly as it was (the per-user DP analyses need it; a split over all
// ratings at once changes how many of everyone's ratings are held out).
TEST(HoldOutPerUserTest, EachUserIsSplitAloneAndKeepsARating) {
  std::vector<Rating> all;
  for (int32_t u = 0; u < 30; ++u) {
    const int32_t n = 1 + (u * 7) % 23;  // 1..23 ratings
    for (int32_t j = 0; j < n; ++j) all.push_back({u, j, static_cast<float>(1 + (u + j) % 5)});
  }
  const random::Csprng rng = random::Csprng::FromSeed(4);
  std::vector<Rating> train = all;
  const std::vector<Rating> held = HoldOutPerUser(train, 0.2, rng);
  EXPECT_EQ(train.size() + held.size(), all.size());
  for (int32_t u = 0; u < 30; ++u) {
    const int32_t n = 1 + (u * 7) % 23;
    const auto mine = [u](const Rating& r) { return r.user == u; };
    const auto h = std::count_if(held.begin(), held.end(), mine);
    EXPECT_EQ(h, std::min<int64_t>(n - 1, std::llround(0.2 * n))) << "user " << u;
    EXPECT_GE(std::count_if(train.begin(), train.end(), mine), 1) << "user " << u;
  }
  // The neighbour without user 29: every other user's split is unchanged.
  std::vector<Rating> without;
  for (const Rating& r : all) {
    if (r.user != 29) without.push_back(r);
  }
  const std::vector<Rating> held2 = HoldOutPerUser(without, 0.2, rng);
  std::vector<Rating> expected;
  for (const Rating& r : held) {
    if (r.user != 29) expected.push_back(r);
  }
  ASSERT_EQ(held2.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(std::tie(held2[k].user, held2[k].item), std::tie(expected[k].user, expected[k].item));
  }
  EXPECT_TRUE(HoldOutPerUser(without, 0.0, rng).empty());
}

}  // namespace
}  // namespace fedmf::data
