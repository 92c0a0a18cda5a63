#include "common/data/index_map.h"

#include <algorithm>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fedmf::data {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(IndexMapTest, IdentityMapsEveryLocalIndexToItselfWithoutAnArray) {
  const IndexMap map = IndexMap::Identity(4);
  EXPECT_TRUE(map.is_identity());
  EXPECT_EQ(map.size(), 4u);
  EXPECT_EQ(map[3], 3);
  EXPECT_THAT(map, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(map.ToVector(), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(IndexMap::Identity(0), IsEmpty());
  EXPECT_THAT(IndexMap::Identity(-2), IsEmpty());
}

TEST(IndexMapTest, AListThatIsTheIdentityIsStoredAsOne) {
  EXPECT_TRUE(IndexMap({0, 1, 2}).is_identity());
  EXPECT_TRUE(IndexMap(std::vector<int32_t>{}).is_identity());
  const IndexMap other({0, 2, 5});
  EXPECT_FALSE(other.is_identity());
  EXPECT_EQ(other[1], 2);
  EXPECT_THAT(other, ElementsAre(0, 2, 5));
}

TEST(IndexMapTest, PushBackKeepsTheIdentityUntilAnIdBreaksIt) {
  IndexMap map;
  for (int32_t id = 0; id < 3; ++id) map.push_back(id);
  EXPECT_TRUE(map.is_identity());
  map.push_back(7);  // the ids so far become an array, then 7 follows
  EXPECT_FALSE(map.is_identity());
  EXPECT_THAT(map, ElementsAre(0, 1, 2, 7));
  map.push_back(3);
  EXPECT_THAT(map, ElementsAre(0, 1, 2, 7, 3));
  map.clear();
  EXPECT_TRUE(map.empty());
  EXPECT_TRUE(map.is_identity());

  IndexMap starts_elsewhere;
  starts_elsewhere.push_back(4);
  EXPECT_FALSE(starts_elsewhere.is_identity());
  EXPECT_THAT(starts_elsewhere, ElementsAre(4));
}

TEST(IndexMapTest, EqualityComparesIdsNotStorage) {
  EXPECT_EQ(IndexMap::Identity(3), IndexMap({0, 1, 2}));
  EXPECT_NE(IndexMap::Identity(3), IndexMap::Identity(2));
  EXPECT_NE(IndexMap::Identity(2), IndexMap({0, 2}));
  EXPECT_NE(IndexMap({1, 0}), IndexMap({0, 1}));
  EXPECT_EQ(IndexMap({3, 1}), IndexMap({3, 1}));
}

TEST(IndexMapTest, IteratorsSupportFindAndDistance) {
  const IndexMap map({4, 9, 6});
  const auto it = std::find(map.begin(), map.end(), 6);
  ASSERT_NE(it, map.end());
  EXPECT_EQ(it - map.begin(), 2);
  EXPECT_EQ(std::find(map.begin(), map.end(), 5), map.end());
  const IndexMap identity = IndexMap::Identity(1000);
  EXPECT_EQ(std::find(identity.begin(), identity.end(), 999) - identity.begin(), 999);
}

}  // namespace
}  // namespace fedmf::data
