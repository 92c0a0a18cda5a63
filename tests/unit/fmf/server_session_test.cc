#include "common/fmf/server_session.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::fmf {
namespace {

JobConfig SmallJob(int rounds) {
  JobConfig c;
  c.setting = Setting::kHfl;
  c.split = SplitKind::kHorizontal;
  c.rounds = rounds;
  c.dim = 2;
  return c;
}

mf::Matrix Filled(double x) { return mf::Matrix::Constant(3, 2, x); }

TEST(ServerSessionTest, WeightedAverageOverContributors) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  auto s = ServerSession::Create(SmallJob(2), 3, {{"a", 1}, {"b", 3}}, rng);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->shared().rows(), 3);
  ASSERT_THAT(s->SubmitUpdate(0, 0, Filled(0.2)), IsOk());
  ASSERT_THAT(s->SubmitUpdate(1, 0, Filled(1.0)), IsOk());
  auto summary = s->CloseRound();
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(summary->contributors, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(summary->missing.empty());
  // (1 * 0.2 + 3 * 1.0) / 4 = 0.8, released at float32 precision.
  EXPECT_NEAR(s->shared()(2, 1), 0.8, 1e-7);
  EXPECT_EQ(s->shared(), mf::RoundedToFloat32(s->shared()));
  EXPECT_EQ(s->round(), 1);
}

TEST(ServerSessionTest, MissingPartyIsRenormalizedAway) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  auto s = ServerSession::Create(SmallJob(2), 3, {{"a", 1}, {"b", 3}}, rng);
  ASSERT_THAT(s->SubmitUpdate(1, 0, Filled(0.5)), IsOk());
  auto summary = s->CloseRound();
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(summary->missing, (std::vector<int32_t>{0}));
  EXPECT_NEAR(s->shared()(0, 0), 0.5, 1e-12);
}

TEST(ServerSessionTest, RejectsBadUpdatesWithoutTouchingTheSum) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  auto s = ServerSession::Create(SmallJob(3), 3, {{"a", 1}, {"b", 1}}, rng);
  mf::Matrix nan = Filled(0.1);
  nan(1, 1) = std::nan("");
  mf::Matrix inf = Filled(0.1);
  inf(0, 0) = std::numeric_limits<double>::infinity();
  mf::Matrix negative = Filled(0.1);
  negative(2, 0) = -0.01;
  mf::Matrix unclipped = Filled(2.0);  // row norm^2 = 8 > R = 5
  EXPECT_EQ(s->SubmitUpdate(0, 0, nan).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->SubmitUpdate(0, 0, inf).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->SubmitUpdate(0, 0, negative).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->SubmitUpdate(0, 0, unclipped).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->SubmitUpdate(0, 0, mf::Matrix::Constant(4, 2, 0.1)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->SubmitUpdate(0, 1, Filled(0.1)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->SubmitUpdate(5, 0, Filled(0.1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->SubmitUpdate(-1, 0, Filled(0.1)).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_THAT(s->SubmitUpdate(0, 0, Filled(0.3)), IsOk());
  EXPECT_EQ(s->SubmitUpdate(0, 0, Filled(0.3)).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_THAT(s->CloseRound(), IsOk());
  // Only the one good update was averaged.
  EXPECT_NEAR(s->shared()(1, 1), 0.3, 1e-7);
}

TEST(ServerSessionTest, EmptyRoundStaysOpenAndJobFinishes) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  auto s = ServerSession::Create(SmallJob(1), 3, {{"a", 1}}, rng);
  EXPECT_EQ(s->CloseRound().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->round(), 0);
  ASSERT_THAT(s->SubmitUpdate(0, 0, Filled(0.1)), IsOk());
  ASSERT_THAT(s->CloseRound(), IsOk());
  EXPECT_EQ(s->phase(), ServerSession::Phase::kFinished);
  EXPECT_EQ(s->SubmitUpdate(0, 1, Filled(0.1)).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ServerSessionTest, RestoreResumesAtTheGivenRound) {
  auto s = ServerSession::Restore(SmallJob(5), {{"a", 1}}, 3, Filled(0.4));
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->round(), 3);
  EXPECT_EQ(s->shared(), Filled(0.4));
  EXPECT_FALSE(ServerSession::Restore(SmallJob(5), {{"a", 1}}, 6, Filled(0.4)).ok());
  EXPECT_FALSE(ServerSession::Restore(SmallJob(5), {{"a", 0}}, 1, Filled(0.4)).ok());
}

TEST(ServerSessionTest, InitialMatrixIsClippedAndSeeded) {
  random::Csprng a = random::Csprng::FromSeed(4), b = random::Csprng::FromSeed(4);
  JobConfig c = SmallJob(1);
  c.dim = 20;
  auto s1 = ServerSession::Create(c, 50, {{"a", 1}}, a);
  auto s2 = ServerSession::Create(c, 50, {{"a", 1}}, b);
  EXPECT_EQ(s1->shared(), s2->shared());
  EXPECT_GE(s1->shared().minCoeff(), 0.0);
  EXPECT_LE(s1->shared().rowwise().squaredNorm().maxCoeff(), 5.0 + 1e-12);
  EXPECT_EQ(s1->shared(), mf::RoundedToFloat32(s1->shared()));  // float32 values
}

}  // namespace
}  // namespace fedmf::fmf

namespace fedmf::fmf {
namespace {

JobConfig CouplingJob(int rounds) {
  JobConfig c;
  c.setting = Setting::kCoupling;
  c.split = SplitKind::kHorizontal;
  c.granularity = Granularity::kRating;
  c.local_iters = 1;
  c.rounds = rounds;
  c.dim = 2;
  c.learning_rate = 0.5;
  c.coupling_bound = 0.25;
  return c;
}

// The coupling server holds the model and takes the paper's step on the
// plain sum of the owners' noisy sums; a noisy sum is checked for its shape
// and finiteness only (Gaussian noise is unbounded and may be negative).
TEST(ServerSessionTest, CouplingStepsTheModelWithTheSumOfTheOwnersSums) {
  auto layout = coupling::FlatLayout::Create(3, 2, 2);
  ASSERT_THAT(layout, IsOk());
  random::Csprng rng = random::Csprng::FromSeed(2);
  auto s =
      ServerSession::CreateCoupling(CouplingJob(2), *layout, {{"a", 1}, {"b", 1}, {"c", 1}}, rng);
  ASSERT_THAT(s, IsOk());
  ASSERT_EQ(s->shared().cols(), layout->size());
  const mf::Matrix before = s->shared();
  mf::Matrix up_a = mf::Matrix::Constant(1, layout->size(), -0.3);
  mf::Matrix up_b = mf::Matrix::Constant(1, layout->size(), 0.1);
  ASSERT_THAT(s->SubmitUpdate(0, 0, up_a), IsOk());
  mf::Matrix bad = up_b;
  bad(0, 3) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(s->SubmitUpdate(1, 0, bad).ok());
  EXPECT_FALSE(s->SubmitUpdate(1, 0, mf::Matrix::Zero(1, layout->size() + 1)).ok());
  ASSERT_THAT(s->SubmitUpdate(1, 0, up_b), IsOk());
  auto summary = s->CloseRound();  // "c" missed the round: it adds nothing
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(summary->missing, (std::vector<int32_t>{2}));
  // theta - 0.5 * (-0.3 + 0.1) = theta + 0.1; couplings clamped to 0.25.
  const int64_t begin = layout->couplings_begin();
  EXPECT_NEAR(s->shared()(0, 0), before(0, 0) + 0.1, 1e-7);
  EXPECT_NEAR(s->shared()(0, begin - 1), before(0, begin - 1) + 0.1, 1e-7);
  for (int64_t k = begin; k < layout->size(); ++k) {
    EXPECT_NEAR(s->shared()(0, k), std::min(before(0, k) + 0.1, 0.25), 1e-7) << k;
  }
  EXPECT_EQ(s->shared(), mf::RoundedToFloat32(s->shared()));
}

TEST(ServerSessionTest, CouplingRestoreNeedsTheLayout) {
  auto created = coupling::FlatLayout::Create(3, 2, 2);
  ASSERT_THAT(created, IsOk());
  const std::optional<coupling::FlatLayout> layout = *created;
  const mf::Matrix model = mf::Matrix::Zero(1, layout->size());
  EXPECT_FALSE(ServerSession::Restore(CouplingJob(2), {{"a", 1}}, 1, model).ok());
  EXPECT_FALSE(ServerSession::Restore(CouplingJob(2), {{"a", 1}}, 1,
                                      mf::Matrix::Zero(1, layout->size() - 1), layout)
                   .ok());
  auto s = ServerSession::Restore(CouplingJob(2), {{"a", 1}}, 1, model, layout);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->round(), 1);
  // An HFL job with a layout is refused too.
  EXPECT_FALSE(ServerSession::Restore(SmallJob(2), {{"a", 1}}, 1, Filled(0.1), layout).ok());
}

}  // namespace
}  // namespace fedmf::fmf
