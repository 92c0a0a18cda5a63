#include "common/mf/top_n.h"

#include "gtest/gtest.h"

namespace fedmf::mf {
namespace {

using Scored = std::vector<std::pair<int32_t, double>>;

TEST(TopNTest, BestFirstTiesToTheSmallerItem) {
  Scored scored{{4, 3.5}, {1, 4.0}, {7, 3.5}, {2, 1.0}, {0, 3.5}};
  KeepTopN(3, &scored);
  EXPECT_EQ(scored, (Scored{{1, 4.0}, {0, 3.5}, {4, 3.5}}));
}

TEST(TopNTest, FewerThanAskedAreAllKeptSorted) {
  Scored scored{{3, 1.0}, {5, 2.0}};
  KeepTopN(10, &scored);
  EXPECT_EQ(scored, (Scored{{5, 2.0}, {3, 1.0}}));
  KeepTopN(0, &scored);
  EXPECT_TRUE(scored.empty());
}

}  // namespace
}  // namespace fedmf::mf
