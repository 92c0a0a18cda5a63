// Training the coupling model: it learns, a seed fixes it, the accountant's
// epsilon is the one for (q, z, steps), and bad options are named.
#include "common/coupling/train.h"

#include <cmath>
#include <vector>

#include "common/coupling/dp_step.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/coupling/test_data.h"

namespace fedmf::coupling {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

constexpr data::RatingRange kRange{1, 5};

struct Split {
  std::vector<std::vector<data::Rating>> owners;
  std::vector<data::Rating> validation;
};

// Two owners by user parity; every 10th rating held out for validation.
Split TwoOwners(const std::vector<data::Rating>& ratings) {
  Split s;
  s.owners.resize(2);
  for (size_t k = 0; k < ratings.size(); ++k) {
    if (k % 10 == 0) {
      s.validation.push_back(ratings[k]);
    } else {
      s.owners[ratings[k].user % 2].push_back(ratings[k]);
    }
  }
  return s;
}

CouplingOptions Fast() {
  CouplingOptions o;
  o.dim = 4;
  o.epochs = 25;
  o.sample_rate = 0.2;
  o.learning_rate = 0.05;
  o.clip = 1;
  o.zeta = 0.001;
  o.init_scale = 0.1;
  return o;
}

TEST(CouplingTrainTest, NonPrivateTrainingLearnsTheSignal) {
  const Split s = TwoOwners(LowRankRatings(40, 50, 0.5, 2));
  random::Csprng rng = random::Csprng::FromSeed(1);
  ASSERT_OK_AND_ASSIGN(auto run,
                       TrainCoupling(s.owners, 40, 50, kRange, Fast(), s.validation, rng));
  ASSERT_EQ(run.epochs.size(), 25u);
  EXPECT_EQ(run.steps, 25 * 5);
  // The offset alone (the range midpoint) has validation MSE around the
  // signal's variance; the trained model must explain most of it.
  CouplingModel offset_only = run.model;
  offset_only.u.setZero();
  offset_only.v.setZero();
  const double baseline = Evaluate(offset_only, s.validation, kRange).mse;
  const double trained = run.epochs.back().validation.mse;
  EXPECT_LT(trained, 0.5 * baseline) << "baseline " << baseline;
  EXPECT_LT(trained, run.epochs.front().validation.mse);
}

TEST(CouplingTrainTest, ASeedFixesTheRunAndNoiseChangesIt) {
  const Split s = TwoOwners(LowRankRatings(20, 25, 0.5, 4));
  CouplingOptions o = Fast();
  o.epochs = 3;
  o.noise_multiplier = 1;
  random::Csprng a = random::Csprng::FromSeed(9), b = random::Csprng::FromSeed(9);
  auto ra = TrainCoupling(s.owners, 20, 25, kRange, o, s.validation, a);
  auto rb = TrainCoupling(s.owners, 20, 25, kRange, o, s.validation, b);
  ASSERT_THAT(ra, IsOk());
  ASSERT_THAT(rb, IsOk());
  EXPECT_EQ(ra->model.s, rb->model.s);
  EXPECT_EQ(ra->model.u, rb->model.u);
  o.noise_multiplier = 0;
  random::Csprng c = random::Csprng::FromSeed(9);
  ASSERT_OK_AND_ASSIGN(auto rc, TrainCoupling(s.owners, 20, 25, kRange, o, s.validation, c));
  // Noise reaches S everywhere, not only the rows a batch touched.
  EXPECT_GT((ra->model.s - rc.model.s).cwiseAbs().minCoeff(), 0);
}

TEST(CouplingTrainTest, CouplingsStayInsideTheBoundTheoremOneAssumes) {
  const Split s = TwoOwners(LowRankRatings(20, 25, 0.5, 4));
  CouplingOptions o = Fast();
  o.epochs = 3;
  o.noise_multiplier = 50;  // noise alone would push S and W far out
  o.coupling_bound = 0.25;
  random::Csprng rng = random::Csprng::FromSeed(2);
  ASSERT_OK_AND_ASSIGN(auto run, TrainCoupling(s.owners, 20, 25, kRange, o, s.validation, rng));
  EXPECT_DOUBLE_EQ(run.model.s.cwiseAbs().maxCoeff(), 0.25);
  EXPECT_DOUBLE_EQ(run.model.wt.cwiseAbs().maxCoeff(), 0.25);
}

TEST(CouplingTrainTest, EpsilonIsTheSubsampledGaussianOverAllSteps) {
  CouplingOptions o;
  o.sample_rate = 0.05;
  o.noise_multiplier = 1.2;
  const int64_t steps = 300 * StepsPerEpoch(o.sample_rate);
  EXPECT_EQ(steps, 6000);
  ASSERT_OK_AND_ASSIGN(auto eps, CouplingEpsilon(o, steps, 1e-5));
  ASSERT_OK_AND_ASSIGN(auto direct, dp::ComputeEpsilon(0.05, 1.2, 6000, 1e-5));
  EXPECT_DOUBLE_EQ(eps, direct);
  EXPECT_GT(eps, 1);  // not free: 6000 steps at z = 1.2
  o.noise_multiplier = 0;
  EXPECT_TRUE(std::isinf(*CouplingEpsilon(o, steps, 1e-5)));
}

TEST(CouplingTrainTest, BadOptionsAndRatingsAreNamed) {
  CouplingOptions o = Fast();
  o.sample_rate = 0;
  EXPECT_THAT(ValidateCouplingOptions(o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sample_rate = 0")));
  o = Fast();
  o.clip = -1;
  EXPECT_THAT(ValidateCouplingOptions(o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("clip = -1")));
  random::Csprng rng = random::Csprng::FromSeed(1);
  std::vector<std::vector<data::Rating>> owners = {{{0, 0, 3.0f}, {1, 7, 4.0f}}};
  EXPECT_THAT(TrainCoupling(owners, 2, 5, kRange, Fast(), {}, rng),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("owner 0's training rating 1 (user 1, item 7")));
  owners = {{{0, 0, 9.0f}}};
  EXPECT_THAT(TrainCoupling(owners, 2, 5, kRange, Fast(), {}, rng),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("value 9")));
}

}  // namespace
}  // namespace fedmf::coupling
