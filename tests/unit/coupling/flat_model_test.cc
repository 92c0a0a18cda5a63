#include "common/coupling/flat_model.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::coupling {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

TEST(FlatLayoutTest, SizesAndLimits) {
  ASSERT_OK_AND_ASSIGN(auto layout, FlatLayout::Create(943, 1682, 10));
  EXPECT_EQ(layout.couplings_begin(), (943 + 1682) * 10);
  EXPECT_EQ(layout.size(), (943 + 1682) * 10 + 943 * 943 + 1682 * 1682);
  // MovieLens-10M's users alone: refused, naming the limit and what scales.
  EXPECT_THAT(FlatLayout::Create(71567, 10681, 10),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sparse or low-rank")));
  EXPECT_THAT(FlatLayout::Create(int64_t{1} << 40, 5, 10),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FlatLayout::Create(0, 5, 10), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(FlatModelTest, RoundTripKeepsEveryBlockAndTakesTheReceiversOffset) {
  ASSERT_OK_AND_ASSIGN(auto layout, FlatLayout::Create(5, 7, 3));
  random::Csprng rng = random::Csprng::FromSeed(3);
  ASSERT_OK_AND_ASSIGN(auto model, InitialModel(5, 7, 3, /*offset=*/3.0, 0.5, rng));
  const mf::Matrix flat = FlattenModel(model);
  ASSERT_EQ(flat.rows(), 1);
  ASSERT_EQ(flat.cols(), layout.size());
  // U first, then V, S, W^T, each row-major.
  EXPECT_EQ(flat(0, 1), model.u(0, 1));
  EXPECT_EQ(flat(0, 5 * 3), model.v(0, 0));
  EXPECT_EQ(flat(0, layout.couplings_begin() + 5 + 2), model.s(1, 2));
  EXPECT_EQ(flat(0, layout.size() - 1), model.wt(6, 6));
  ASSERT_OK_AND_ASSIGN(auto back, UnflattenModel(flat, layout, /*offset=*/-1.5));
  EXPECT_EQ(back.offset, -1.5);
  EXPECT_EQ(back.u, model.u);
  EXPECT_EQ(back.v, model.v);
  EXPECT_EQ(back.s, model.s);
  EXPECT_EQ(back.wt, model.wt);
}

TEST(FlatModelTest, RefusesTheWrongShapeAndNonFiniteValues) {
  ASSERT_OK_AND_ASSIGN(auto layout, FlatLayout::Create(4, 3, 2));
  mf::Matrix flat = mf::Matrix::Zero(1, layout.size());
  EXPECT_THAT(UnflattenModel(mf::Matrix::Zero(1, layout.size() - 1), layout, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected 1x")));
  EXPECT_THAT(UnflattenModel(mf::Matrix::Zero(2, layout.size()), layout, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
  flat(0, 17) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(UnflattenModel(flat, layout, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("index 17")));
}

TEST(FlatModelTest, FlatStepIsThePapersStep) {
  ASSERT_OK_AND_ASSIGN(auto layout, FlatLayout::Create(6, 4, 3));
  random::Csprng rng = random::Csprng::FromSeed(5);
  ASSERT_OK_AND_ASSIGN(auto model, InitialModel(6, 4, 3, 0, 0.9, rng));
  GradientSum total = GradientSum::ZerosLike(model);
  for (mf::Matrix* m : {&total.u, &total.v, &total.s, &total.wt}) {
    for (int64_t k = 0; k < m->size(); ++k) m->data()[k] = 40 * (rng.NextDouble() - 0.5);
  }
  mf::Matrix flat = FlattenModel(model);
  ASSERT_THAT(ApplyFlatStep(FlattenSum(total), 0.05, 1.0, layout, &flat), IsOk());
  CouplingModel expected = model;
  ApplyStep(total, 0.05, 1.0, &expected);
  EXPECT_EQ(flat, FlattenModel(expected));
  // The total moved some couplings past the bound: they were clamped, and
  // U, V were not (some exceed 1 after the step).
  EXPECT_DOUBLE_EQ(flat.rightCols(layout.size() - layout.couplings_begin()).cwiseAbs().maxCoeff(),
                   1.0);
  EXPECT_GT(flat.leftCols(layout.couplings_begin()).cwiseAbs().maxCoeff(), 1.0);
  EXPECT_THAT(ApplyFlatStep(mf::Matrix::Zero(1, 3), 0.05, 1.0, layout, &flat),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::coupling
