#include "common/dp/composition.h"

#include <cmath>

#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::dp {
namespace {

TEST(CompositionTest, Parallel) {
  const PrivacyGuarantee g = ParallelComposition({{1.0, 1e-6}, {3.0, 1e-7}, {2.0, 1e-5}});
  EXPECT_DOUBLE_EQ(g.epsilon, 3.0);
  EXPECT_DOUBLE_EQ(g.delta, 1e-5);
}

TEST(CompositionTest, SequentialSums) {
  const PrivacyGuarantee g = SequentialComposition({{1.0, 1e-6}, {0.5, 2e-6}});
  EXPECT_DOUBLE_EQ(g.epsilon, 1.5);
  EXPECT_DOUBLE_EQ(g.delta, 3e-6);
}

TEST(CompositionTest, EmptyIsFree) {
  for (const PrivacyGuarantee& g : {ParallelComposition({}), SequentialComposition({})}) {
    EXPECT_EQ(g.epsilon, 0);
    EXPECT_EQ(g.delta, 0);
  }
}

// The VFL per-user default job: T*T' + kappa = 1100 steps at eta = 0.01,
// each party calibrated to eps_k = 1 at delta = 1e-5.
constexpr double kQ = 0.01;
constexpr int64_t kSteps = 1100;
constexpr double kDelta = 1e-5;

TEST(CompositionTest, OneScheduleIsTheAccountantsEpsilon) {
  ASSERT_OK_AND_ASSIGN(auto z, CalibrateNoiseMultiplier(kQ, kSteps, kDelta, 1.0));
  auto one = ComposeGaussianSchedules({{kQ, z, kSteps}}, kDelta);
  auto direct = ComputeEpsilon(kQ, z, kSteps, kDelta);
  ASSERT_TRUE(one.ok() && direct.ok());
  EXPECT_DOUBLE_EQ(*one, *direct);
  EXPECT_LE(*one, 1.0);
}

TEST(CompositionTest, TenVflPartiesCostMoreThanTheoremFour) {
  ASSERT_OK_AND_ASSIGN(auto z, CalibrateNoiseMultiplier(kQ, kSteps, kDelta, 1.0));
  auto eps_k = ComputeEpsilon(kQ, z, kSteps, kDelta);
  ASSERT_THAT(eps_k, IsOk());
  std::vector<GaussianSchedule> parties(10, GaussianSchedule{kQ, z, kSteps});
  auto global = ComposeGaussianSchedules(parties, kDelta);
  ASSERT_THAT(global, IsOk());
  // The FMF paper's Theorem 4 would claim sqrt(10) * eps_k ~ 3.16; the RDP
  // composition of the ten curves is the valid (and larger) number.
  const double theorem4 = std::sqrt(10.0) * *eps_k;
  EXPECT_GT(*global, theorem4 + 0.2) << "global " << *global << " theorem 4 " << theorem4;
  EXPECT_NEAR(*global, 3.43, 0.03);
  // Composing ten curves equals one schedule of ten times the steps.
  ASSERT_OK_AND_ASSIGN(auto as_one, ComputeEpsilon(kQ, z, 10 * kSteps, kDelta));
  EXPECT_NEAR(*global, as_one, 1e-9);
  // ...and never exceeds basic composition.
  EXPECT_LT(*global, 10 * *eps_k);
}

TEST(CompositionTest, HeterogeneousSchedulesAndBadDelta) {
  auto a = ComposeGaussianSchedules({{0.01, 2.0, 100}, {0.02, 3.0, 50}}, kDelta);
  auto b = ComposeGaussianSchedules({{0.02, 3.0, 50}, {0.01, 2.0, 100}}, kDelta);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(*a, *b);
  ASSERT_OK_AND_ASSIGN(auto only_first, ComposeGaussianSchedules({{0.01, 2.0, 100}}, kDelta));
  EXPECT_GT(*a, only_first);
  EXPECT_THAT(ComposeGaussianSchedules({{0.01, 2.0, 100}}, 0.0),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::dp
