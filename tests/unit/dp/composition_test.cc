#include "common/dp/composition.h"

#include <cmath>

#include "gtest/gtest.h"

namespace fedmf::dp {
namespace {

TEST(CompositionTest, Parallel) {
  const PrivacyGuarantee g = ParallelComposition({{1.0, 1e-6}, {3.0, 1e-7}, {2.0, 1e-5}});
  EXPECT_DOUBLE_EQ(g.epsilon, 3.0);
  EXPECT_DOUBLE_EQ(g.delta, 1e-5);
}

TEST(CompositionTest, VflPerUserAddsEpsilonsInQuadrature) {
  const PrivacyGuarantee g = VflPerUserComposition({{3.0, 1e-6}, {4.0, 1e-5}});
  EXPECT_DOUBLE_EQ(g.epsilon, 5.0);
  EXPECT_DOUBLE_EQ(g.delta, 1e-5);
  // K equal parties: sqrt(K) * eps.
  const PrivacyGuarantee four = VflPerUserComposition({{1.5, 1e-5}, {1.5, 1e-5}, {1.5, 1e-5}, {1.5, 1e-5}});
  EXPECT_DOUBLE_EQ(four.epsilon, 3.0);
}

TEST(CompositionTest, SequentialSums) {
  const PrivacyGuarantee g = SequentialComposition({{1.0, 1e-6}, {0.5, 2e-6}});
  EXPECT_DOUBLE_EQ(g.epsilon, 1.5);
  EXPECT_DOUBLE_EQ(g.delta, 3e-6);
}

TEST(CompositionTest, EmptyIsFree) {
  for (const PrivacyGuarantee& g :
       {ParallelComposition({}), VflPerUserComposition({}), SequentialComposition({})}) {
    EXPECT_EQ(g.epsilon, 0);
    EXPECT_EQ(g.delta, 0);
  }
}

TEST(CompositionTest, Ordering) {
  // parallel <= VFL quadrature <= sequential for the same parts.
  const std::vector<PrivacyGuarantee> parts = {{0.7, 1e-6}, {1.2, 1e-6}, {0.3, 1e-6}};
  EXPECT_LE(ParallelComposition(parts).epsilon, VflPerUserComposition(parts).epsilon);
  EXPECT_LE(VflPerUserComposition(parts).epsilon, SequentialComposition(parts).epsilon);
}

}  // namespace
}  // namespace fedmf::dp
