#include "common/fmf/server_session.h"

#include <cmath>
#include <limits>

#include "common/coupling/owner_session.h"
#include "common/coupling/train.h"
#include "common/fmf/coupling_job.h"
#include "common/fmf/noise_plan.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/coupling/test_data.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

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
  ASSERT_OK_AND_ASSIGN(auto s, ServerSession::Create(SmallJob(2), 3, {{"a", 1}, {"b", 3}}, rng));
  EXPECT_EQ(s.shared().rows(), 3);
  ASSERT_THAT(s.SubmitUpdate(0, 0, Filled(0.2)), IsOk());
  ASSERT_THAT(s.SubmitUpdate(1, 0, Filled(1.0)), IsOk());
  ASSERT_OK_AND_ASSIGN(auto summary, s.CloseRound());
  EXPECT_EQ(summary.contributors, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(summary.missing.empty());
  // (1 * 0.2 + 3 * 1.0) / 4 = 0.8, released at float32 precision.
  EXPECT_NEAR(s.shared()(2, 1), 0.8, 1e-7);
  EXPECT_EQ(s.shared(), mf::RoundedToFloat32(s.shared()));
  EXPECT_EQ(s.round(), 1);
}

TEST(ServerSessionTest, MissingPartyIsRenormalizedAway) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  auto s = ServerSession::Create(SmallJob(2), 3, {{"a", 1}, {"b", 3}}, rng);
  ASSERT_THAT(s->SubmitUpdate(1, 0, Filled(0.5)), IsOk());
  ASSERT_OK_AND_ASSIGN(auto summary, s->CloseRound());
  EXPECT_EQ(summary.missing, (std::vector<int32_t>{0}));
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
  ASSERT_OK_AND_ASSIGN(auto s, ServerSession::Restore(SmallJob(5), {{"a", 1}}, 3, Filled(0.4)));
  EXPECT_EQ(s.round(), 3);
  EXPECT_EQ(s.shared(), Filled(0.4));
  EXPECT_THAT(ServerSession::Restore(SmallJob(5), {{"a", 1}}, 6, Filled(0.4)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ServerSession::Restore(SmallJob(5), {{"a", 0}}, 1, Filled(0.4)),
              StatusIs(absl::StatusCode::kInvalidArgument));
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
  ASSERT_OK_AND_ASSIGN(auto layout, coupling::FlatLayout::Create(3, 2, 2));
  random::Csprng rng = random::Csprng::FromSeed(2);
  auto s =
      ServerSession::CreateCoupling(CouplingJob(2), layout, {{"a", 1}, {"b", 1}, {"c", 1}}, rng);
  ASSERT_THAT(s, IsOk());
  ASSERT_EQ(s->shared().cols(), layout.size());
  const mf::Matrix before = s->shared();
  mf::Matrix up_a = mf::Matrix::Constant(1, layout.size(), -0.3);
  mf::Matrix up_b = mf::Matrix::Constant(1, layout.size(), 0.1);
  ASSERT_THAT(s->SubmitUpdate(0, 0, up_a), IsOk());
  mf::Matrix bad = up_b;
  bad(0, 3) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(s->SubmitUpdate(1, 0, bad), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s->SubmitUpdate(1, 0, mf::Matrix::Zero(1, layout.size() + 1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_THAT(s->SubmitUpdate(1, 0, up_b), IsOk());
  auto summary = s->CloseRound();  // "c" missed the round: it adds nothing
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(summary->missing, (std::vector<int32_t>{2}));
  // theta - 0.5 * (-0.3 + 0.1) = theta + 0.1; couplings clamped to 0.25.
  const int64_t begin = layout.couplings_begin();
  EXPECT_NEAR(s->shared()(0, 0), before(0, 0) + 0.1, 1e-7);
  EXPECT_NEAR(s->shared()(0, begin - 1), before(0, begin - 1) + 0.1, 1e-7);
  for (int64_t k = begin; k < layout.size(); ++k) {
    EXPECT_NEAR(s->shared()(0, k), std::min(before(0, k) + 0.1, 0.25), 1e-7) << k;
  }
  EXPECT_EQ(s->shared(), mf::RoundedToFloat32(s->shared()));
}

TEST(ServerSessionTest, CouplingRestoreNeedsTheLayout) {
  ASSERT_OK_AND_ASSIGN(auto created, coupling::FlatLayout::Create(3, 2, 2));
  const std::optional<coupling::FlatLayout> layout = created;
  const mf::Matrix model = mf::Matrix::Zero(1, layout->size());
  EXPECT_THAT(ServerSession::Restore(CouplingJob(2), {{"a", 1}}, 1, model),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(ServerSession::Restore(CouplingJob(2), {{"a", 1}}, 1,
                                      mf::Matrix::Zero(1, layout->size() - 1), layout)
                   .ok());
  ASSERT_OK_AND_ASSIGN(auto s,
                       ServerSession::Restore(CouplingJob(2), {{"a", 1}}, 1, model, layout));
  EXPECT_EQ(s.round(), 1);
  // An HFL job with a layout is refused too.
  EXPECT_THAT(ServerSession::Restore(SmallJob(2), {{"a", 1}}, 1, Filled(0.1), layout),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::fmf

namespace fedmf::fmf {
namespace {

// With q = 1 and no noise every step is deterministic: the owners'
// sessions and the coupling server, exchanging float32 as the daemons do,
// take TrainCoupling's steps (up to float32 rounding of the model).
TEST(ServerSessionTest, CouplingSessionsTakeTrainCouplingsSteps) {
  const std::vector<data::Rating> all = coupling::LowRankRatings(16, 12, 0.5, 3);
  std::vector<std::vector<data::Rating>> owners(2);
  for (const data::Rating& r : all) owners[r.user < 8 ? 0 : 1].push_back(r);
  const data::RatingRange range{1, 5};
  JobConfig c = CouplingJob(25);
  c.dim = 3;
  c.sample_rate = 1;
  c.learning_rate = 0.05;
  c.coupling_bound = 1;
  c.coupling_init = 0.3;
  c.epsilon = std::numeric_limits<double>::infinity();
  ASSERT_OK_AND_ASSIGN(auto plan, PlanNoise(c));
  ASSERT_OK_AND_ASSIGN(auto terms, CouplingOwnerTerms(c, plan, range));

  coupling::CouplingOptions options = terms.options;
  options.epochs = 25;  // one full-batch step each
  random::Csprng rng = random::Csprng::FromSeed(7);
  ASSERT_OK_AND_ASSIGN(auto reference,
                       coupling::TrainCoupling(owners, 16, 12, range, options, {}, rng));
  ASSERT_EQ(reference.steps, 25);

  ASSERT_OK_AND_ASSIGN(auto layout, coupling::FlatLayout::Create(16, 12, 3));
  random::Csprng init = random::Csprng::FromSeed(7).Fork("coupling/init");  // as TrainCoupling
  ASSERT_OK_AND_ASSIGN(auto server,
                       ServerSession::CreateCoupling(c, layout, {{"a", 1}, {"b", 1}}, init));
  dp::PrivacyLedger ledger(1, 1e-5);
  std::vector<std::unique_ptr<coupling::OwnerSession>> sessions;
  for (int k = 0; k < 2; ++k) {
    auto s = coupling::OwnerSession::Create(terms, layout, owners[k], {}, &ledger,
                                            random::Csprng::FromSeed(k));
    ASSERT_THAT(s, IsOk());
    sessions.push_back(std::move(*s));
  }
  for (int32_t round = 0; round < 25; ++round) {
    for (int k = 0; k < 2; ++k) {
      ASSERT_OK_AND_ASSIGN(auto release, sessions[k]->RunStep(round, server.shared()));
      const mf::Matrix wire = release.cast<float>().cast<double>();  // as uploaded
      ASSERT_THAT(server.SubmitUpdate(k, round, wire), IsOk());
    }
    ASSERT_THAT(server.CloseRound(), IsOk());
  }
  EXPECT_EQ(server.phase(), ServerSession::Phase::kFinished);
  EXPECT_TRUE(ledger.entries().empty());
  const mf::Matrix expected = coupling::FlattenModel(reference.model);
  random::Csprng init_again = random::Csprng::FromSeed(7).Fork("coupling/init");
  ASSERT_OK_AND_ASSIGN(auto initial_model, coupling::InitialModel(16, 12, 3, 0, 0.3, init_again));
  const mf::Matrix initial = coupling::FlattenModel(initial_model);
  // The steps moved the model far more than float32 rounding separates them.
  EXPECT_GT((expected - initial).cwiseAbs().maxCoeff(), 0.05);
  EXPECT_LT((server.shared() - expected).cwiseAbs().maxCoeff(), 1e-5);
}

}  // namespace
}  // namespace fedmf::fmf
