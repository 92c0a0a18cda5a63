#include "common/dp/gaussian_dp.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "common/dp/calibration.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::StatusIs;

namespace fedmf::dp {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Reference values of the tight mu-GDP curve
//   delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
// evaluated independently (Python's math.erfc, bisection to 1e-15).
TEST(GaussianDpTest, DeltaMatchesTheClosedForm) {
  EXPECT_NEAR(GaussianDpDelta(1, 1), 0.1269367375066439, 1e-12);
  EXPECT_NEAR(GaussianDpDelta(2, 2), 0.3318979987768293, 1e-12);
  EXPECT_EQ(GaussianDpDelta(kInfinity, 3), 1.0);
}

TEST(GaussianDpTest, EpsilonInvertsDelta) {
  ASSERT_OK_AND_ASSIGN(double e_half, GaussianDpEpsilon(0.5, 1e-5));
  EXPECT_NEAR(e_half, 1.9930914044151207, 1e-8);
  ASSERT_OK_AND_ASSIGN(double e_one, GaussianDpEpsilon(1, 1e-5));
  EXPECT_NEAR(e_one, 4.3771780956812245, 1e-8);
  EXPECT_LE(GaussianDpDelta(1, e_one), 1e-5);  // the result always meets delta
}

// The analytic Gaussian mechanism (Balle and Wang 2018) at epsilon = 1,
// delta = 1e-5 needs sigma = 3.73 Delta; the RDP accountant asks 4.045
// (docs/archive/results-2026.md, section hfl-feasibility) — the 8% of issue #53.
TEST(GaussianDpTest, OneReleaseAtEpsilonOneNeedsZ373) {
  ASSERT_OK_AND_ASSIGN(double mu, GaussianDpMu(1, 1e-5));
  EXPECT_NEAR(1 / mu, 3.7306316348159476, 1e-7);
  ASSERT_OK_AND_ASSIGN(double rdp_z, CalibrateNoiseMultiplier(1.0, 1, 1e-5, 1.0));
  EXPECT_NEAR(rdp_z, 4.045, 0.001);
  EXPECT_LT(1 / mu, rdp_z);
  // And the RDP accountant does not certify the GDP noise for epsilon = 1.
  ASSERT_OK_AND_ASSIGN(double rdp_eps, ComputeEpsilon(1.0, 1 / mu, 1, 1e-5));
  EXPECT_GT(rdp_eps, 1.0);
}

TEST(GaussianDpTest, LargeEpsilonsStayFinite) {
  for (double eps : {4.0, 16.0, 64.0, 256.0, 1000.0}) {
    ASSERT_OK_AND_ASSIGN(double mu, GaussianDpMu(eps, 1e-5));
    EXPECT_TRUE(std::isfinite(mu)) << eps;
    ASSERT_OK_AND_ASSIGN(double back, GaussianDpEpsilon(mu, 1e-5));
    EXPECT_NEAR(back, eps, 1e-6 * eps) << eps;
  }
  ASSERT_OK_AND_ASSIGN(double mu64, GaussianDpMu(64, 1e-5));
  EXPECT_NEAR(mu64, 7.891793893700656, 1e-6);
}

// Composition is exact: k releases at z each are one release at z / sqrt(k),
// and the RDP accountant's composition is never tighter.
TEST(GaussianDpTest, CompositionAddsInverseSquares) {
  ASSERT_OK_AND_ASSIGN(double mu, ComposedGaussianMu({2.0, 2.0, 2.0, 2.0}));
  EXPECT_DOUBLE_EQ(mu, 1.0);
  ASSERT_OK_AND_ASSIGN(double four, ComposedGaussianEpsilon({2.0, 2.0, 2.0, 2.0}, 1e-5));
  ASSERT_OK_AND_ASSIGN(double one, ComposedGaussianEpsilon({1.0}, 1e-5));
  EXPECT_DOUBLE_EQ(four, one);
  ASSERT_OK_AND_ASSIGN(double rdp, ComputeEpsilon(1.0, 2.0, 4, 1e-5));
  EXPECT_LT(four, rdp);
  ASSERT_OK_AND_ASSIGN(double skipped, ComposedGaussianMu({kInfinity, 1.0}));
  EXPECT_DOUBLE_EQ(skipped, 1.0);
  ASSERT_OK_AND_ASSIGN(double noiseless, ComposedGaussianMu({0.0, 1.0}));
  EXPECT_TRUE(std::isinf(noiseless));
}

TEST(GaussianDpTest, RefusesBadArguments) {
  EXPECT_THAT(GaussianDpEpsilon(1, 0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(GaussianDpEpsilon(0, 1e-5), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(GaussianDpMu(-1, 1e-5), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ComposedGaussianMu({-1.0}), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(double free_eps, ComposedGaussianEpsilon({kInfinity}, 1e-5));
  EXPECT_EQ(free_eps, 0.0);
  ASSERT_OK_AND_ASSIGN(double inf_mu, GaussianDpMu(kInfinity, 1e-5));
  EXPECT_TRUE(std::isinf(inf_mu));
}

}  // namespace
}  // namespace fedmf::dp
