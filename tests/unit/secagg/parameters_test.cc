#include "common/secagg/parameters.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::secagg {
namespace {

SecurityRequirements Req(double dropout, double corrupt,
                         AdversaryModel adv = AdversaryModel::kSemiHonest) {
  SecurityRequirements r;
  r.dropout_rate = dropout;
  r.corrupt_rate = corrupt;
  r.adversary = adv;
  return r;
}

// Pinned values (σ = 40, η = 20); see parameters.h for the derivation.
TEST(ParametersTest, KnownTable) {
  struct Row {
    size_t n;
    double dropout, corrupt;
    AdversaryModel adv;
    int k, t, m;
  };
  const Row rows[] = {
      {100, 0.3, 0.0, AdversaryModel::kSemiHonest, 24, 5, 70},
      {1000, 0.1, 0.0, AdversaryModel::kSemiHonest, 18, 6, 900},
      {1000, 0.3, 0.0, AdversaryModel::kSemiHonest, 34, 7, 700},
      {1000, 0.1, 0.05, AdversaryModel::kSemiHonest, 36, 19, 900},
      {1000, 0.1, 0.0, AdversaryModel::kSemiMalicious, 36, 19, 900},
      {16000, 0.3, 0.0, AdversaryModel::kSemiHonest, 40, 8, 11200},
  };
  for (const Row& r : rows) {
    ASSERT_OK_AND_ASSIGN(auto p, ChooseSecAggPlusParameters(r.n, Req(r.dropout, r.corrupt, r.adv)));
    EXPECT_EQ(p.graph, GraphKind::kHarary);
    EXPECT_EQ(p.degree, r.k) << r.n << " " << r.dropout;
    EXPECT_EQ(p.threshold, r.t) << r.n << " " << r.dropout;
    EXPECT_EQ(p.min_survivors, r.m);
  }
}

TEST(ParametersTest, ChosenDegreeSatisfiesTheConnectivityBoundAndIsMinimal) {
  for (size_t n : {200u, 1000u, 5000u}) {
    for (double d : {0.05, 0.2, 0.3}) {
      ASSERT_OK_AND_ASSIGN(auto p, ChooseSecAggPlusParameters(n, Req(d, 0.0)));
      const size_t bad = static_cast<size_t>(std::floor(d * n + 1e-9));
      const double bound = -41 * std::log(2.0);
      EXPECT_LT(LogHararyDisconnectionBound(n, p.degree, bad), bound);
      EXPECT_GE(LogHararyDisconnectionBound(n, p.degree - 2, bad), bound);
      EXPECT_GE(p.threshold, 2);
      EXPECT_LE(p.threshold, p.degree + 1);
    }
  }
}

TEST(ParametersTest, DegreeGrowsLogarithmically) {
  auto a = ChooseSecAggPlusParameters(1000, Req(0.3, 0.0));
  auto b = ChooseSecAggPlusParameters(16000, Req(0.3, 0.0));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(b->degree, a->degree);
  EXPECT_LT(b->degree, a->degree + 12);  // 16x the devices, a few more neighbours
}

TEST(ParametersTest, SemiMaliciousThresholdIsAMajorityOfTheNeighbourhood) {
  ASSERT_OK_AND_ASSIGN(
      auto p, ChooseSecAggPlusParameters(1000, Req(0.1, 0.05, AdversaryModel::kSemiMalicious)));
  EXPECT_GT(2 * p.threshold, p.degree);
}

TEST(ParametersTest, SmallCohortsFallBackToTheCompleteGraph) {
  // n = 5: the only sparse candidate, a ring (k = 2), cannot keep t >= 2 live holders.
  ASSERT_OK_AND_ASSIGN(auto p, ChooseSecAggPlusParameters(5, Req(0.3, 0.0)));
  EXPECT_EQ(p.graph, GraphKind::kComplete);
  EXPECT_EQ(p.threshold, 4);
  EXPECT_EQ(p.min_survivors, 4);
  // n = 10 already admits a sparse graph: 3 dropouts cannot cut a k = 6 ring.
  ASSERT_OK_AND_ASSIGN(auto q, ChooseSecAggPlusParameters(10, Req(0.3, 0.0)));
  EXPECT_EQ(q.graph, GraphKind::kHarary);
  EXPECT_EQ(q.degree, 6);
}

TEST(ParametersTest, CompleteGraph) {
  ASSERT_OK_AND_ASSIGN(auto p, ChooseCompleteGraphParameters(100, Req(0.3, 0.1)));
  EXPECT_EQ(p.threshold, 70);
  // Semi-malicious needs t > (n + γn)/2 = 55: fine; with δ = 0.5 it is not.
  EXPECT_TRUE(
      ChooseCompleteGraphParameters(100, Req(0.3, 0.1, AdversaryModel::kSemiMalicious)).ok());
  EXPECT_FALSE(
      ChooseCompleteGraphParameters(100, Req(0.5, 0.1, AdversaryModel::kSemiMalicious)).ok());
}

TEST(ParametersTest, RejectsNonsense) {
  EXPECT_THAT(ChooseSecAggPlusParameters(1, Req(0.1, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ChooseSecAggPlusParameters(100, Req(1.0, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ChooseSecAggPlusParameters(100, Req(-0.1, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ChooseSecAggPlusParameters(100, Req(0.6, 0.5)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace fedmf::secagg
