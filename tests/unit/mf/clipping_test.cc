#include "common/mf/clipping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/unit/mf/test_util.h"

namespace fedmf::mf {
namespace {

using random::Csprng;
using testing::UniformMatrix;

bool Feasible(const Eigen::Ref<const Eigen::RowVectorXd>& x, double r) {
  return x.minCoeff() >= 0.0 && x.squaredNorm() <= r;
}

// Dimensions covering every fixed-size kernel and the dynamic fallback.
class ClipDimTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(ClipDimTest, InvariantsOnRandomMatrices) {
  const int32_t dim = GetParam();
  const double r = 5.0;
  Csprng rng = Csprng::FromSeed(7 + dim);
  // Entries in [-1, 1.5): a mix of rows inside and outside the ball.
  const Matrix input = UniformMatrix(400, dim, -1.0, 1.5, rng);
  Matrix m = input;
  ClipEmbeddings(m, r);
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    EXPECT_GE(m.row(i).minCoeff(), 0.0);
    EXPECT_LE(m.row(i).norm(), std::sqrt(r) + 1e-12);
  }
  // Idempotent (up to one rounding of rows sitting exactly on the sphere).
  Matrix twice = m;
  ClipEmbeddings(twice, r);
  EXPECT_LE((twice - m).cwiseAbs().maxCoeff(), 1e-14);
  // ClipRow does the same thing row by row.
  Matrix by_row = input;
  for (Eigen::Index i = 0; i < by_row.rows(); ++i) ClipRow(by_row.row(i).data(), dim, r);
  EXPECT_EQ(by_row, m);
}

TEST_P(ClipDimTest, FeasibleRowsAreUntouchedBitForBit) {
  const int32_t dim = GetParam();
  const double r = 5.0;
  Csprng rng = Csprng::FromSeed(70 + dim);
  Matrix m = UniformMatrix(300, dim, 0.0, 1.0, rng);
  // Scale every row strictly inside the ball, a few exactly onto the sphere.
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const double target = (i % 10 == 0) ? std::sqrt(r) * 0.999999 : rng.NextDouble() * std::sqrt(r);
    m.row(i) *= target / m.row(i).norm();
    if (!Feasible(m.row(i), r)) m.row(i) *= 0.99;
  }
  const Matrix before = m;
  ClipEmbeddings(m, r);
  EXPECT_EQ(m, before);
}

TEST_P(ClipDimTest, IsTheEuclideanProjection) {
  // Brute force: the clipped row must be at least as close to the input as
  // (a) random feasible points anywhere and (b) feasible points near it.
  const int32_t dim = GetParam();
  const double r = 5.0;
  Csprng rng = Csprng::FromSeed(700 + dim);
  const Matrix input = UniformMatrix(60, dim, -1.5, 2.0, rng);
  Matrix proj = input;
  ClipEmbeddings(proj, r);
  int near_checked = 0;
  for (Eigen::Index i = 0; i < input.rows(); ++i) {
    const double d_proj = (input.row(i) - proj.row(i)).norm();
    for (int t = 0; t < 200; ++t) {
      Eigen::RowVectorXd y = UniformMatrix(1, dim, 0.0, 1.0, rng).row(0);
      y *= rng.NextDouble() * std::sqrt(r) / y.norm();
      ASSERT_TRUE(Feasible(y, r));
      EXPECT_LE(d_proj, (input.row(i) - y).norm() + 1e-12);
    }
    for (int t = 0; t < 200; ++t) {
      // A feasible point near the projection: perturb, zero the negatives
      // and pull back inside the ball by a random factor (any feasible
      // point is a fair competitor, however it was made).
      Eigen::RowVectorXd y =
          (proj.row(i) + UniformMatrix(1, dim, -1e-3, 1e-3, rng).row(0)).cwiseMax(0.0);
      const double norm = y.norm();
      if (norm > std::sqrt(r)) y *= std::sqrt(r) * (1.0 - 1e-3 * rng.NextDouble()) / norm;
      if (!Feasible(y, r)) continue;
      ++near_checked;
      EXPECT_LE(d_proj, (input.row(i) - y).norm() + 1e-12);
    }
  }
  EXPECT_GT(near_checked, 60 * 190);
}

INSTANTIATE_TEST_SUITE_P(Dims, ClipDimTest, ::testing::Values(1, 3, 10, 16, 20, 32, 50, 7));

TEST(ClipTest, HandComputedExample) {
  // (-1, 3, 4) -> (0, 3, 4), norm 5 > sqrt(5) -> scaled by sqrt(5)/5.
  double row[3] = {-1.0, 3.0, 4.0};
  ClipRow(row, 3, 5.0);
  EXPECT_EQ(row[0], 0.0);
  EXPECT_NEAR(row[1], 3.0 / std::sqrt(5.0), 1e-15);
  EXPECT_NEAR(row[2], 4.0 / std::sqrt(5.0), 1e-15);
  // Negative entries only: zeroed, no scaling.
  double row2[2] = {-2.0, 1.0};
  ClipRow(row2, 2, 5.0);
  EXPECT_EQ(row2[0], 0.0);
  EXPECT_EQ(row2[1], 1.0);
}

TEST(ClipTest, EmptyMatrix) {
  Matrix m(0, 20);
  ClipEmbeddings(m, 5.0);
  Matrix n(4, 0);
  ClipEmbeddings(n, 5.0);
  SUCCEED();
}

TEST(SensitivityTest, Constants) {
  EXPECT_DOUBLE_EQ(SensitivityOneMatrix(1.0), 2.0);
  EXPECT_DOUBLE_EQ(SensitivityBothMatrices(1.0), 2.0 * std::sqrt(2.0));
  EXPECT_NEAR(SensitivityOneMatrix(5.0), 2.0 * 5.0 * std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(SensitivityBothMatrices(5.0), 10.0 * std::sqrt(10.0), 1e-12);
  EXPECT_NEAR(SensitivityOneMatrix(10.0), 2.0 * std::pow(10.0, 1.5), 1e-12);
}

TEST(SensitivityTest, BoundsOneRatingGradientOnTheFeasibleSet) {
  // For clipped u, v and x in [0, R]: ||2 e v|| <= 2 R^{3/2} and the stacked
  // (u, v) gradient <= 2 sqrt(2) R^{3/2}.
  const double r = 5.0;
  Csprng rng = Csprng::FromSeed(11);
  Matrix u = UniformMatrix(2000, 20, 0.0, 2.0, rng);
  Matrix v = UniformMatrix(2000, 20, 0.0, 2.0, rng);
  ClipEmbeddings(u, r);
  ClipEmbeddings(v, r);
  for (Eigen::Index i = 0; i < u.rows(); ++i) {
    const double x = (i % 2 == 0) ? 0.0 : r * rng.NextDouble();
    const double e = x - u.row(i).dot(v.row(i));
    const double gu = (2 * e * v.row(i)).norm();
    const double gv = (2 * e * u.row(i)).norm();
    EXPECT_LE(gu, SensitivityOneMatrix(r) + 1e-9);
    EXPECT_LE(std::hypot(gu, gv), SensitivityBothMatrices(r) + 1e-9);
  }
}

}  // namespace
}  // namespace fedmf::mf
