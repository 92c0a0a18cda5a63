#include "common/fmf/simulator.h"

#include <cmath>
#include <limits>

#include "common/base/status_macros.h"
#include "common/data/synthetic.h"
#include "common/dp/rdp_accountant.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::fmf {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

data::Dataset Synthetic() {
  data::SyntheticOptions o;
  o.num_users = 200;
  o.num_items = 120;
  o.density = 0.1;
  auto d = data::GenerateSynthetic(o);
  EXPECT_THAT(d, IsOk());
  return *d;
}

JobConfig Job(Setting setting, SplitKind split, double epsilon) {
  JobConfig c;
  c.setting = setting;
  c.split = split;
  c.granularity = DefaultGranularity(setting);  // per user for HFL (per rating is refused)
  c.rounds = 10;
  c.local_iters = 5;
  c.dim = 5;
  c.sample_rate = 0.1;
  c.epsilon = epsilon;
  c.vfl_finetune_iters = 10;
  c.pretrain_epochs = 5;
  c.finetune_epochs = 5;
  c.central_epochs = 15;
  c.seed = 11;
  return c;
}

absl::StatusOr<SimulationResult> RunJob(const JobConfig& c, int parties) {
  data::Dataset d = Synthetic();
  FederationOptions o;
  o.parties = parties;
  ASSIGN_OR_RETURN(auto fed, BuildFederation(c, d, o));
  return Simulate(c, fed);
}

TEST(SimulatorTest, CentralLearnsFarBeyondInitialization) {
  ASSERT_OK_AND_ASSIGN(auto r, RunJob(Job(Setting::kCentral, SplitKind::kNone, kInf), 1));
  EXPECT_EQ(r.parties.size(), 1u);
  EXPECT_GT(r.test.count, 0);
  EXPECT_LT(r.train.mse, 0.8);
  EXPECT_LT(r.test.mse, 1.2);
  EXPECT_TRUE(std::isinf(r.epsilon));
}

TEST(SimulatorTest, SameSeedSameResult) {
  JobConfig c = Job(Setting::kHfl, SplitKind::kHorizontal, 2.0);
  auto a = RunJob(c, 3), b = RunJob(c, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->test.mse, b->test.mse);
  c.seed = 12;
  ASSERT_OK_AND_ASSIGN(auto d, RunJob(c, 3));
  EXPECT_NE(a->test.mse, d.test.mse);
}

// Stage 1 runs users on separate threads, each on its own stream: the
// result does not depend on the number of threads (and these parties are
// too small for the blocked epoch, which would).
TEST(SimulatorTest, LocalThreadsDoNotChangeHfl) {
  JobConfig c = Job(Setting::kHfl, SplitKind::kHorizontal, 2.0);
  auto one = RunJob(c, 3);
  c.local_threads = 3;
  auto three = RunJob(c, 3);
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(one->test.mse, three->test.mse);
  for (size_t k = 0; k < one->parties.size(); ++k) {
    EXPECT_TRUE(one->parties[k].user_embeddings == three->parties[k].user_embeddings) << k;
  }
}

TEST(SimulatorTest, HflReportsEpsilonWithinTarget) {
  ASSERT_OK_AND_ASSIGN(auto r, RunJob(Job(Setting::kHfl, SplitKind::kHorizontal, 2.0), 3));
  EXPECT_EQ(r.rounds, 10);
  EXPECT_EQ(r.parties.size(), 3u);
  for (const auto& p : r.parties) {
    EXPECT_LE(p.epsilon, 2.0 + 1e-9);
    EXPECT_GT(p.epsilon, 1.9);
    EXPECT_EQ(p.steps, 50);
  }
  EXPECT_GT(r.plan.noise_multiplier, 0);
}

TEST(SimulatorTest, VflPaperChargesStage2AndFinetune) {
  JobConfig c = Job(Setting::kVfl, SplitKind::kVertical, 4.0);
  c.algorithm = Algorithm::kPaper;
  ASSERT_OK_AND_ASSIGN(auto r, RunJob(c, 3));
  for (const auto& p : r.parties) {
    EXPECT_EQ(p.steps, 60);  // 10 * 5 + kappa 10
    EXPECT_LE(p.epsilon, 4.0 + 1e-9);
    EXPECT_EQ(p.users, 200);
  }
  // Per rating a rating sits at one party: the global epsilon is the max.
  EXPECT_FALSE(r.epsilon_per_user_global.has_value());
}

TEST(SimulatorTest, VflPerUserGlobalEpsilonComposesThePartiesCurves) {
  JobConfig c = Job(Setting::kVfl, SplitKind::kVertical, 4.0);
  c.granularity = Granularity::kUser;
  c.algorithm = Algorithm::kPaper;
  auto r = RunJob(c, 3);
  ASSERT_THAT(r, IsOk());
  ASSERT_TRUE(r->epsilon_per_user_global.has_value());
  // Three parties each charged 60 steps and one size release on every user:
  // three curves summed, i.e. 180 steps of one schedule and 3 count releases.
  dp::RdpAccountant three;
  three.AddSteps(r->plan.sample_rate, r->plan.noise_multiplier, 180);
  three.AddSteps(1.0, r->plan.count_noise_multiplier, 3);
  ASSERT_OK_AND_ASSIGN(auto eps, three.GetEpsilon(c.delta));
  EXPECT_NEAR(*r->epsilon_per_user_global, eps.epsilon, 1e-9);
  // Each party's own epsilon (its ledger) is the plan's: steps and count.
  for (const auto& p : r->parties) EXPECT_NEAR(p.epsilon, r->plan.epsilon, 1e-9);
  EXPECT_GT(*r->epsilon_per_user_global, r->epsilon);
  EXPECT_LE(r->epsilon, 4.0 + 1e-9);
}

// The default VFL finish (issue #16): the same T * T' DP steps on U and
// V_{F_k}, kappa neither run nor charged, and then each party refits its own
// model without noise, stopped on a validation split of its own ratings. Its
// DP releases are the paper's without kappa (same z, same epsilon); the
// party's final model, which never leaves it, is no longer a DP one and fits
// the party's ratings far better.
TEST(SimulatorTest, VflAlternateRefitsLocallyAndChargesStage2Only) {
  JobConfig paper = Job(Setting::kVfl, SplitKind::kVertical, 1.0);
  paper.algorithm = Algorithm::kPaper;
  JobConfig no_kappa = paper;
  no_kappa.vfl_finetune_iters = 0;
  JobConfig alt = paper;
  alt.algorithm = Algorithm::kAlternate;
  auto p = RunJob(paper, 3);
  auto p0 = RunJob(no_kappa, 3);
  auto a = RunJob(alt, 3);
  ASSERT_THAT(p, IsOk());
  ASSERT_THAT(p0, IsOk());
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->plan.steps, 50);
  EXPECT_DOUBLE_EQ(a->plan.noise_multiplier, p0->plan.noise_multiplier);
  EXPECT_DOUBLE_EQ(a->epsilon, p0->epsilon);
  EXPECT_LE(a->epsilon, 1.0 + 1e-9);
  EXPECT_EQ(p->validation.count, 0);
  for (size_t k = 0; k < a->parties.size(); ++k) {
    EXPECT_EQ(a->parties[k].steps, 50) << k;
    EXPECT_EQ(p->parties[k].steps, 60) << k;
    EXPECT_GT(a->parties[k].validation.count, 0) << k;
    EXPECT_EQ(a->parties[k].test.count, p->parties[k].test.count) << k;
  }
  // At epsilon 1 the DP-trained model stays far from a fit; the refit
  // does not (measured: 2.00 against 1.37 on this data).
  EXPECT_LT(a->test.mse, 0.75 * p->test.mse);
}

TEST(SimulatorTest, SynSgdRunsTTimesTPrimeRounds) {
  ASSERT_OK_AND_ASSIGN(auto r, RunJob(Job(Setting::kHflSynSgd, SplitKind::kHorizontal, 2.0), 2));
  EXPECT_EQ(r.rounds, 50);
  for (const auto& p : r.parties) EXPECT_EQ(p.steps, 50);
}

TEST(SimulatorTest, LocalOnlyBaselines) {
  ASSERT_OK_AND_ASSIGN(auto vertical, RunJob(Job(Setting::kLocal, SplitKind::kVertical, 2.0), 3));
  for (const auto& p : vertical.parties) EXPECT_LE(p.epsilon, 2.0 + 1e-9);
  ASSERT_OK_AND_ASSIGN(auto horizontal,
                       RunJob(Job(Setting::kLocal, SplitKind::kHorizontal, 2.0), 3));
  EXPECT_TRUE(std::isinf(horizontal.epsilon));  // non-private by definition
}

TEST(SimulatorTest, PerUserGranularityTrims) {
  JobConfig c = Job(Setting::kHfl, SplitKind::kHorizontal, 2.0);
  c.algorithm = Algorithm::kPaper;  // trims (the default clips per user)
  c.granularity = Granularity::kUser;
  c.theta = 3;
  ASSERT_OK_AND_ASSIGN(auto r, RunJob(c, 2));
  EXPECT_EQ(r.plan.theta, 3);
  EXPECT_LE(r.epsilon, 2.0 + 1e-9);
}

TEST(SimulatorTest, ProgressIsReportedEveryRound) {
  data::Dataset d = Synthetic();
  JobConfig c = Job(Setting::kHfl, SplitKind::kHorizontal, 2.0);
  FederationOptions o;
  o.parties = 2;
  ASSERT_OK_AND_ASSIGN(auto fed, BuildFederation(c, d, o));
  std::vector<RoundProgress> seen;
  auto r = Simulate(
      c, fed, [&](const RoundProgress& p) { seen.push_back(p); }, 5);
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(seen.size(), 10u);
  EXPECT_EQ(seen.back().round, 10);
  EXPECT_TRUE(seen[4].test_mse.has_value());
  EXPECT_FALSE(seen[3].test_mse.has_value());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].epsilon, seen[i - 1].epsilon);
  EXPECT_NEAR(seen.back().epsilon, r->epsilon, 1e-9);
}

}  // namespace
}  // namespace fedmf::fmf

namespace fedmf::fmf {
namespace {

// issue #16: the alternate algorithm releases exactly what the paper's does
// (same rounds, steps, noise, epsilon); only local, unreleased work differs.
TEST(SimulatorTest, AlternateSpendsExactlyThePapersBudget) {
  JobConfig paper = Job(Setting::kHfl, SplitKind::kHorizontal, 1.0);
  paper.algorithm = Algorithm::kPaper;
  JobConfig alt = paper;
  alt.algorithm = Algorithm::kAlternate;
  alt.alternations = 5;
  auto p = RunJob(paper, 3);
  auto a = RunJob(alt, 3);
  ASSERT_THAT(p, IsOk());
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->rounds, p->rounds);
  EXPECT_EQ(a->plan.steps, p->plan.steps);
  EXPECT_DOUBLE_EQ(a->plan.noise_multiplier, p->plan.noise_multiplier);
  EXPECT_DOUBLE_EQ(a->epsilon, p->epsilon);
  EXPECT_LE(a->epsilon, 1.0);
  for (size_t k = 0; k < a->parties.size(); ++k) {
    EXPECT_EQ(a->parties[k].steps, p->parties[k].steps);
    // The validation split is carved from the party's own training ratings.
    EXPECT_GT(a->parties[k].validation.count, 0);
    EXPECT_EQ(a->parties[k].train_ratings, p->parties[k].train_ratings);
    EXPECT_EQ(a->parties[k].test.count, p->parties[k].test.count);
  }
  EXPECT_EQ(p->validation.count, 0);
  EXPECT_NE(a->test.mse, p->test.mse);
}

// Deterministic under the seed, like every simulator path (the validation
// split and the refits draw from forks of the party's own stream).
TEST(SimulatorTest, AlternateSameSeedSameResult) {
  JobConfig alt = Job(Setting::kHfl, SplitKind::kHorizontal, 1.0);
  alt.algorithm = Algorithm::kAlternate;
  auto a = RunJob(alt, 3);
  auto b = RunJob(alt, 3);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(a->test.mse, b->test.mse);
  EXPECT_EQ(a->validation.mse, b->validation.mse);
}

// The --compare baselines (select_epochs_on_validation): each party holds
// out a tenth of its own ratings, the epoch count is chosen on them, and the
// model is then refit on all of them. Without the flag nothing is held out.
TEST(SimulatorTest, BaselinesChooseTheirEpochsOnValidation) {
  for (Setting setting : {Setting::kLocal, Setting::kCentral}) {
    JobConfig fixed =
        Job(setting, setting == Setting::kLocal ? SplitKind::kHorizontal : SplitKind::kNone, kInf);
    fixed.central_epochs = 60;
    JobConfig chosen = fixed;
    chosen.select_epochs_on_validation = true;
    const int parties = setting == Setting::kLocal ? 3 : 1;
    auto f = RunJob(fixed, parties);
    auto c = RunJob(chosen, parties);
    ASSERT_THAT(f, IsOk());
    ASSERT_THAT(c, IsOk());
    EXPECT_EQ(f->validation.count, 0);
    EXPECT_GT(c->validation.count, 0);
    EXPECT_EQ(c->test.count, f->test.count);  // the test split is untouched
    // A different model: fewer epochs than the cap were chosen, or the
    // refit saw the held-out ratings in another order.
    EXPECT_NE(c->test.mse, f->test.mse);
    EXPECT_LT(c->validation.mse, 1.5);
  }
  // A private local-only run (the paper's VFL's DP baseline) never holds
  // out: its schedule is the DP one.
  JobConfig dp = Job(Setting::kLocal, SplitKind::kVertical, 2.0);
  dp.select_epochs_on_validation = true;
  ASSERT_OK_AND_ASSIGN(auto d, RunJob(dp, 3));
  EXPECT_EQ(d.validation.count, 0);
}

// The premise of fedmf train --compare's no-transfer baseline: at epsilon
// 1e-6 a party's model is, for all practical purposes, the same whatever its
// partners hold, so it is a model the party could have computed alone.
// Replacing every other party's ratings by random ones leaves party 0's
// test MSE where it was; at epsilon inf the partners do matter.
TEST(SimulatorTest, NoTransferEpsilonLearnsNothingFromPartners) {
  JobConfig c = Job(Setting::kHfl, SplitKind::kHorizontal, 1e-6);
  data::Dataset d = Synthetic();
  FederationOptions o;
  o.parties = 3;
  ASSERT_OK_AND_ASSIGN(auto real, BuildFederation(c, d, o));
  data::Federation junk = real;
  random::Csprng rng = random::Csprng::FromSeed(3);
  for (size_t k = 1; k < junk.parties.size(); ++k) {
    for (data::Rating& r : junk.parties[k].train) {
      r.value = static_cast<float>(1 + rng.NextDouble() * 4);
    }
  }
  for (double epsilon : {1e-6, kInf}) {
    c.epsilon = epsilon;
    auto a = Simulate(c, real);
    auto b = Simulate(c, junk);
    ASSERT_THAT(a, IsOk());
    ASSERT_THAT(b, IsOk());
    const double diff = std::fabs(a->parties[0].test.mse - b->parties[0].test.mse);
    if (std::isinf(epsilon)) {
      EXPECT_GT(diff, 1e-3) << "partners' ratings should matter without noise";
    } else {
      EXPECT_LT(diff, 1e-4 * a->parties[0].test.mse);
    }
  }
}

// --engine grid (mf::GridSgd) for the jobs that train alone: central and
// non-private local-only, with and without the epoch choice on validation.
// It learns, its result does not depend on the thread count, and the
// session gets its ratings back.
TEST(SimulatorTest, GridEngineTrainsAloneAndGivesTheRatingsBack) {
  for (Setting setting : {Setting::kCentral, Setting::kLocal}) {
    for (bool select : {false, true}) {
      JobConfig sgd = Job(
          setting, setting == Setting::kLocal ? SplitKind::kHorizontal : SplitKind::kNone, kInf);
      sgd.select_epochs_on_validation = select;
      JobConfig grid = sgd;
      grid.engine = Engine::kGrid;
      const int parties = setting == Setting::kLocal ? 3 : 1;
      auto a = RunJob(sgd, parties);
      auto b = RunJob(grid, parties);
      grid.local_threads = 2;
      auto c = RunJob(grid, parties);
      ASSERT_THAT(a, IsOk());
      ASSERT_THAT(b, IsOk());
      ASSERT_THAT(c, IsOk());
      SCOPED_TRACE(SettingName(setting) + (select ? " on validation" : " fixed epochs"));
      EXPECT_NE(a->test.mse, b->test.mse);
      EXPECT_LT(b->train.mse, 0.8);  // as CentralLearnsFarBeyondInitialization
      // Central as CentralLearnsFarBeyondInitialization; a local party trains
      // on a third of the ratings (measured: grid 1.19 / 1.22, the SGD engine
      // 1.34 / 1.38, fixed epochs / on validation).
      EXPECT_LT(b->test.mse, setting == Setting::kCentral ? 1.2 : 1.3);
      EXPECT_EQ(b->test.mse, c->test.mse);
      EXPECT_EQ(b->train.count, a->train.count);  // every training rating is back
      EXPECT_EQ(b->validation.count, a->validation.count);
      EXPECT_EQ(select, b->validation.count > 0);
    }
  }
  // Federated stages keep the per-rating SGD: the engine changes nothing there.
  JobConfig hfl = Job(Setting::kHfl, SplitKind::kHorizontal, 2.0);
  auto x = RunJob(hfl, 3);
  hfl.engine = Engine::kGrid;
  auto y = RunJob(hfl, 3);
  ASSERT_THAT(x, IsOk());
  ASSERT_THAT(y, IsOk());
  EXPECT_EQ(x->test.mse, y->test.mse);
}

TEST(JobConfigAlgorithm, ParsesAndValidates) {
  EXPECT_EQ(*ParseAlgorithm("paper"), Algorithm::kPaper);
  EXPECT_EQ(*ParseAlgorithm("alternate"), Algorithm::kAlternate);
  EXPECT_THAT(ParseAlgorithm("als"), StatusIs(absl::StatusCode::kInvalidArgument));
  JobConfig c;
  c.alternations = 0;
  EXPECT_THAT(ValidateJobConfig(c), StatusIs(absl::StatusCode::kInvalidArgument));
  c.alternations = 3;
  c.validation_fraction = 1.0;
  EXPECT_THAT(ValidateJobConfig(c), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::fmf
