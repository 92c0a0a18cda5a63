// The sample gradient against finite differences of the paper's per-rating
// objective (6), and the clipping of line 8.
#include "common/coupling/gradient.h"

#include <cmath>

#include "common/coupling/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::coupling {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

// J_ij of (6) at the model as it is.
double Objective(const CouplingModel& m, const data::Rating& r, double zeta) {
  const CouplingTerms t = ComputeCouplingTerms(m);
  const double e = Predict(m, t, r.user, r.item) - r.value;
  return 0.5 * e * e + 0.5 * zeta *
                           (m.u.row(r.user).squaredNorm() + m.v.row(r.item).squaredNorm() +
                            m.s.row(r.user).squaredNorm() + m.wt.row(r.item).squaredNorm());
}

class GradientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    random::Csprng rng = random::Csprng::FromSeed(3);
    auto m = InitialModel(7, 9, 4, 3.0, 0.5, rng);
    ASSERT_THAT(m, IsOk());
    model_ = *std::move(m);
  }
  // Central difference of J with respect to one coordinate of one block.
  double Derivative(mf::Matrix CouplingModel::*block, int row, int col, const data::Rating& r) {
    const double h = 1e-6;
    CouplingModel plus = model_, minus = model_;
    (plus.*block)(row, col) += h;
    (minus.*block)(row, col) -= h;
    return (Objective(plus, r, kZeta) - Objective(minus, r, kZeta)) / (2 * h);
  }
  static constexpr double kZeta = 0.15;
  CouplingModel model_;
};

TEST_F(GradientTest, MatchesFiniteDifferencesOfTheObjective) {
  const data::Rating r{2, 5, 4.5f};
  SampleGradient g;
  ComputeSampleGradient(model_, ComputeCouplingTerms(model_), r, kZeta, &g);
  ASSERT_EQ(g.user, 2);
  ASSERT_EQ(g.item, 5);
  for (int k = 0; k < model_.dim(); ++k) {
    EXPECT_NEAR(g.u(k), Derivative(&CouplingModel::u, 2, k, r), 1e-7) << "U_i," << k;
    EXPECT_NEAR(g.v(k), Derivative(&CouplingModel::v, 5, k, r), 1e-7) << "V_j," << k;
  }
  for (int a = 0; a < model_.num_users(); ++a) {
    EXPECT_NEAR(g.s(a), Derivative(&CouplingModel::s, 2, a, r), 1e-7) << "S_i," << a;
  }
  for (int b = 0; b < model_.num_items(); ++b) {
    // wt(j, b) = W_bj.
    EXPECT_NEAR(g.w(b), Derivative(&CouplingModel::wt, 5, b, r), 1e-7) << "W_" << b << "j";
  }
}

TEST_F(GradientTest, PredictionIsEquationOneToThree) {
  // The model written out term by term, without the cached su / wv.
  const int i = 4, j = 1;
  const int m = model_.num_users(), n = model_.num_items();
  double expected = model_.offset + model_.u.row(i).dot(model_.v.row(j));
  for (int a = 0; a < m; ++a) expected += model_.s(i, a) * model_.u.row(a).dot(model_.v.row(j)) / m;
  for (int b = 0; b < n; ++b)
    expected += model_.wt(j, b) * model_.u.row(i).dot(model_.v.row(b)) / n;
  EXPECT_NEAR(Predict(model_, ComputeCouplingTerms(model_), i, j), expected, 1e-12);
}

TEST_F(GradientTest, ClippingScalesAllBlocksToTheBound) {
  SampleGradient g;
  ComputeSampleGradient(model_, ComputeCouplingTerms(model_), {0, 0, 1.0f}, kZeta, &g);
  const SampleGradient before = g;
  const double norm = std::sqrt(before.SquaredNorm());
  ASSERT_GT(norm, 0.1);
  EXPECT_DOUBLE_EQ(ClipSampleGradient(0.1, g), norm);
  EXPECT_NEAR(std::sqrt(g.SquaredNorm()), 0.1, 1e-12);
  // The direction is kept: every block scaled by the same factor.
  EXPECT_NEAR(g.s(3) / before.s(3), 0.1 / norm, 1e-12);
  EXPECT_NEAR(g.u(1) / before.u(1), 0.1 / norm, 1e-12);
  // Below the bound nothing changes.
  SampleGradient small = before;
  ClipSampleGradient(2 * norm, small);
  EXPECT_EQ(small.w, before.w);
}

TEST(CouplingModelTest, RefusesSizesItCannotHoldAndNamesTheLimit) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  EXPECT_THAT(InitialModel(71567, 10681, 10, 3, 0.01, rng),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("71567 users and 10681 items need 5235919250 dense couplings")));
  EXPECT_THAT(InitialModel(0, 5, 3, 3, 0.01, rng),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("users (0)")));
  EXPECT_THAT(InitialModel(5, 5, 3, 3, 1.5, rng),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("init scale 1.5")));
}

}  // namespace
}  // namespace fedmf::coupling
