#include "common/cdr/cross_domain_data.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "common/data/loaders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::cdr {
namespace {

using ::fedmf::testing::StatusIs;
using ::testing::ElementsAre;

TEST(AssignSourceDomainTest, AnySourceGenreMakesASourceItem) {
  const std::vector<std::vector<int>> genres = {{1}, {5}, {5, 16}, {}, {0}};
  const std::vector<int> source(kSourceGenres.begin(), kSourceGenres.end());
  EXPECT_THAT(AssignSourceDomain(genres, source), ElementsAre(true, false, true, false, false));
}

// 10 source items (0..9) and 22 target items (10..31). Users 0..5 like every
// source item and target items 10..19; target item 20 + k is liked by every
// user but k mod 6, who never rated it (so each user has exactly two unrated
// target items). User 6 has only 4 source positives and is dropped; item 32
// is only rated 2 (a negative) and is dropped.
data::Dataset SmallTwoDomains() {
  data::Dataset d;
  d.num_users = 7;
  d.num_items = 33;
  d.source = "test";
  for (int32_t i = 0; i < 33; ++i) d.item_ids.push_back(std::to_string(i));
  for (int32_t u = 0; u < 7; ++u) {
    d.user_ids.push_back(std::to_string(u));
    for (int32_t i = 0; i < (u == 6 ? 4 : 10); ++i) d.ratings.push_back({u, i, 5});
    for (int32_t i = 10; i < 20; ++i) d.ratings.push_back({u, i, 4});
    for (int32_t k = 0; k < 12; ++k) {
      if (k % 6 != u) d.ratings.push_back({u, 20 + k, 3});
    }
    d.ratings.push_back({u, 32, 2});
  }
  return d;
}

std::vector<bool> FirstTenAreSource() {
  std::vector<bool> is_source(33, false);
  for (int i = 0; i < 10; ++i) is_source[i] = true;
  return is_source;
}

TEST(CrossDomainDataTest, FiltersHoldsOutAndSamplesNegativesOutsideTheRatedItems) {
  const data::Dataset d = SmallTwoDomains();
  CrossDomainOptions o;
  o.num_negatives = 1;
  o.seed = 7;
  ASSERT_OK_AND_ASSIGN(CrossDomainData c, BuildCrossDomainData(d, FirstTenAreSource(), o));
  EXPECT_EQ(c.num_users, 6);
  EXPECT_EQ(c.num_source_items, 10);
  EXPECT_EQ(c.num_target_items, 22);  // 10..31; 32 has no positive
  ASSERT_EQ(c.test.size(), 6u);
  ASSERT_EQ(c.validation.size(), 6u);
  for (int32_t u = 0; u < 6; ++u) {
    EXPECT_EQ(c.source[u].size(), 10u);
    EXPECT_EQ(c.target_train[u].size(), 18u);  // 20 positives minus test and validation
    EXPECT_NE(c.test[u].positive, c.validation[u].positive);
    // The two unrated items are target indices 10 + u and 16 + u (items 20 + u, 26 + u),
    // one per held-out case.
    std::set<int32_t> negatives;
    for (const auto* cases : {&c.test, &c.validation}) {
      const EvalCase& e = (*cases)[u];
      EXPECT_EQ(e.user, u);
      ASSERT_EQ(e.negatives.size(), 1u);
      negatives.insert(e.negatives[0]);
      EXPECT_FALSE(
          std::binary_search(c.target_train[u].begin(), c.target_train[u].end(), e.positive));
    }
    EXPECT_EQ(negatives, (std::set<int32_t>{10 + u, 16 + u}));
  }
  // Two negatives per case need four unrated items.
  o.num_negatives = 2;
  EXPECT_THAT(BuildCrossDomainData(d, FirstTenAreSource(), o).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // A user needs min_interactions in each domain: with 11 nobody qualifies.
  o.num_negatives = 1;
  o.min_interactions = 11;
  EXPECT_THAT(BuildCrossDomainData(d, FirstTenAreSource(), o).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(CrossDomainDataTest, MaxTargetTrainKeepsASubsetAndTheSameHeldOutItems) {
  const data::Dataset d = SmallTwoDomains();
  CrossDomainOptions o;
  o.num_negatives = 1;
  ASSERT_OK_AND_ASSIGN(CrossDomainData all, BuildCrossDomainData(d, FirstTenAreSource(), o));
  o.max_target_train = 3;
  ASSERT_OK_AND_ASSIGN(CrossDomainData sparse, BuildCrossDomainData(d, FirstTenAreSource(), o));
  for (int32_t u = 0; u < 6; ++u) {
    EXPECT_EQ(sparse.test[u].positive, all.test[u].positive);
    EXPECT_EQ(sparse.validation[u].negatives, all.validation[u].negatives);
    ASSERT_EQ(sparse.target_train[u].size(), 3u);
    for (int32_t i : sparse.target_train[u]) {
      EXPECT_TRUE(std::binary_search(all.target_train[u].begin(), all.target_train[u].end(), i));
    }
    EXPECT_EQ(sparse.source[u], all.source[u]);
  }
  o.max_target_train = -1;
  EXPECT_THAT(BuildCrossDomainData(d, FirstTenAreSource(), o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CrossDomainDataTest, HeldOutItemsAreSeeded) {
  const data::Dataset d = SmallTwoDomains();
  CrossDomainOptions o;
  o.num_negatives = 1;
  ASSERT_OK_AND_ASSIGN(CrossDomainData a, BuildCrossDomainData(d, FirstTenAreSource(), o));
  ASSERT_OK_AND_ASSIGN(CrossDomainData b, BuildCrossDomainData(d, FirstTenAreSource(), o));
  bool differs = false;
  for (uint64_t seed = 2; seed < 6 && !differs; ++seed) {
    o.seed = seed;
    ASSERT_OK_AND_ASSIGN(CrossDomainData other, BuildCrossDomainData(d, FirstTenAreSource(), o));
    for (int32_t u = 0; u < 6; ++u) differs |= other.test[u].positive != a.test[u].positive;
  }
  for (int32_t u = 0; u < 6; ++u) {
    EXPECT_EQ(a.test[u].positive, b.test[u].positive);
    EXPECT_EQ(a.validation[u].positive, b.validation[u].positive);
    EXPECT_EQ(a.test[u].negatives, b.test[u].negatives);
  }
  EXPECT_TRUE(differs);
}

TEST(CrossDomainDataTest, MovieLens100KGenreSplit) {
  const std::filesystem::path dir = std::filesystem::path(FEDMF_SHARED_DIR) / "data/ml-100k";
  if (!std::filesystem::exists(dir / "u.item")) GTEST_SKIP() << "needs ../shared/data/ml-100k";
  ASSERT_OK_AND_ASSIGN(data::Dataset d, data::LoadMovieLens100K((dir / "u.data").string()));
  ASSERT_OK_AND_ASSIGN(auto genres, data::LoadMovieLensGenres((dir / "u.item").string(), d));
  const std::vector<bool> is_source =
      AssignSourceDomain(genres, std::vector<int>(kSourceGenres.begin(), kSourceGenres.end()));
  EXPECT_EQ(std::count(is_source.begin(), is_source.end(), true), 709);
  ASSERT_OK_AND_ASSIGN(CrossDomainData c, BuildCrossDomainData(d, is_source, {}));
  // The counts after the 5-positive filters (recorded in docs/cdr.md).
  EXPECT_EQ(c.num_users, 872);
  EXPECT_EQ(c.num_source_items, 552);
  EXPECT_EQ(c.num_target_items, 647);
  EXPECT_EQ(c.test.size(), 872u);
  for (const EvalCase& e : c.test) EXPECT_EQ(e.negatives.size(), 99u);
  RecordProperty("users", c.num_users);
  RecordProperty("source_items", c.num_source_items);
  RecordProperty("target_items", c.num_target_items);
  std::cout << "ml-100k cdr: users " << c.num_users << " source items " << c.num_source_items
            << " target items " << c.num_target_items << "\n";
}

}  // namespace
}  // namespace fedmf::cdr
