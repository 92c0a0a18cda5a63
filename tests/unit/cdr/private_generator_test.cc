#include "common/cdr/private_generator.h"

#include <cmath>
#include <vector>

#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "common/dp/rdp_conversion.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::cdr {
namespace {

// Two taste groups over 12 source items: users 0..15 like items 0..5, users
// 16..31 items 6..11 (each misses one of its group's items).
std::vector<std::vector<int32_t>> TwoGroupSource() {
  std::vector<std::vector<int32_t>> s(32);
  for (int32_t u = 0; u < 32; ++u) {
    const int32_t base = u < 16 ? 0 : 6;
    for (int32_t i = base; i < base + 6; ++i) {
      if (i != base + u % 6) s[u].push_back(i);
    }
  }
  return s;
}

TEST(PrivateGeneratorTest, EpsilonIsTheAccountantsForTheorem1) {
  GanOptions o;
  o.steps = 20;
  o.batch = 8;
  o.latent = 4;
  o.hidden = 8;
  o.noise_sigma = 50;
  const double delta = 1e-5;
  ASSERT_OK_AND_ASSIGN(PrivateGeneratorResult r,
                       TrainPrivateGenerator(TwoGroupSource(), 12, o, delta));
  EXPECT_EQ(r.steps, 20);
  // z = sigma / (2 sqrt(N)).
  EXPECT_DOUBLE_EQ(r.noise_multiplier, 50 / (2 * std::sqrt(8.0)));
  ASSERT_OK_AND_ASSIGN(double expected, dp::ComputeEpsilon(1.0, r.noise_multiplier, 20, delta));
  EXPECT_DOUBLE_EQ(r.epsilon, expected);
  // The same from Theorem 1's RDP, T * 2 N alpha / sigma^2, converted here.
  const std::vector<double>& orders = dp::DefaultRdpOrders();
  std::vector<double> rdp;
  for (double a : orders) rdp.push_back(20 * 2 * 8 * a / (50.0 * 50.0));
  ASSERT_OK_AND_ASSIGN(dp::EpsilonResult closed, dp::RdpToEpsilon(orders, rdp, delta));
  EXPECT_NEAR(r.epsilon, closed.epsilon, 1e-9 * closed.epsilon);

  o.noise_sigma = 0;
  ASSERT_OK_AND_ASSIGN(PrivateGeneratorResult open,
                       TrainPrivateGenerator(TwoGroupSource(), 12, o, delta));
  EXPECT_TRUE(std::isinf(open.epsilon));
}

TEST(PrivateGeneratorTest, CalibratedSigmaMeetsTheTarget) {
  for (double target : {0.3, 1.2, 5.0}) {
    ASSERT_OK_AND_ASSIGN(double sigma, CalibrateFeedbackSigma(target, 1e-5, 300, 64));
    ASSERT_OK_AND_ASSIGN(double eps,
                         dp::ComputeEpsilon(1.0, StepNoiseMultiplier(sigma, 64), 300, 1e-5));
    EXPECT_LE(eps, target);
    EXPECT_GT(eps, 0.99 * target);
  }
}

// The sensitivity of one generator step, searched over neighbouring source
// data sets: for each user v, v's vector replaced by a random one or emptied,
// the discriminator trained on each data set from the same start with the
// same batches and fakes; the clipped feedback of a batch differs by at most
// 2 C sqrt(N) (Frobenius) and 2 C per example — the Delta the accountant uses.
// At C = 0.005 the unclipped feedback moves further than that, so the
// search can fail.
TEST(PrivateGeneratorTest, FeedbackSensitivityOverNeighbouringDataSets) {
  const std::vector<std::vector<int32_t>> source = TwoGroupSource();
  const int32_t items = 12, n = 8;
  random::Csprng pick = random::Csprng::FromSeed(11);
  for (double clip : {0.005, 1.0}) {
    double worst = 0, unclipped_worst = 0;
    for (int32_t v = 0; v < 32; v += 3) {
      for (int variant = 0; variant < 2; ++variant) {
        std::vector<std::vector<int32_t>> neighbour = source;
        neighbour[v].clear();
        if (variant == 1) {
          for (int32_t i = 0; i < items; ++i) {
            if (pick.Bernoulli(0.5)) neighbour[v].push_back(i);
          }
        }
        random::Csprng init_a = random::Csprng::FromSeed(3), init_b = random::Csprng::FromSeed(3);
        random::Csprng gen_rng = random::Csprng::FromSeed(4);
        Generator g(32, items, 4, 8, gen_rng);
        Discriminator da(32, items, 8, init_a), db(32, items, 8, init_b);
        random::Csprng batches = random::Csprng::FromSeed(5);
        std::vector<int32_t> users;
        for (int step = 0; step < 10; ++step) {
          users.clear();
          for (int32_t k = 0; k < n; ++k)
            users.push_back(static_cast<int32_t>(batches.UniformInt(32)));
          if (step % 3 == 0) users[0] = v;  // the changed user is in some batches
          const Eigen::MatrixXd fake = g.Forward(users);
          da.TrainStep(DenseColumns(source, items, users), fake, users, 0.5, 0.05, 0.1);
          db.TrainStep(DenseColumns(neighbour, items, users), fake, users, 0.5, 0.05, 0.1);
        }
        const Eigen::MatrixXd fake = g.Forward(users);
        const Eigen::MatrixXd fa = ClippedFeedback(da, fake, users, clip);
        const Eigen::MatrixXd fb = ClippedFeedback(db, fake, users, clip);
        for (Eigen::Index k = 0; k < fa.cols(); ++k) {
          EXPECT_LE(fa.col(k).norm(), clip * (1 + 1e-12));
          EXPECT_LE((fa.col(k) - fb.col(k)).norm(), 2 * clip * (1 + 1e-12));
        }
        worst = std::max(worst, (fa - fb).norm());
        unclipped_worst = std::max(unclipped_worst, (ClippedFeedback(da, fake, users, 1e300) -
                                                     ClippedFeedback(db, fake, users, 1e300))
                                                        .norm());
      }
    }
    const double delta_given = 2 * clip * std::sqrt(static_cast<double>(n));
    EXPECT_LE(worst, delta_given * (1 + 1e-12)) << "clip " << clip;
    // The search finds real changes (the discriminator does depend on the data).
    EXPECT_GT(worst, 0.01 * clip) << "clip " << clip;
    // At the small C the unclipped feedback moves by more than Delta: the
    // search would catch a missing or misplaced clip.
    if (clip < 0.01) {
      EXPECT_GT(unclipped_worst, delta_given);
    }
  }
}

TEST(PrivateGeneratorTest, DeterministicUnderASeedAndNoiseChangesTheGenerator) {
  GanOptions o;
  o.steps = 30;
  o.batch = 8;
  o.latent = 4;
  o.hidden = 8;
  o.noise_sigma = 2;
  o.seed = 1;
  ASSERT_OK_AND_ASSIGN(auto a, TrainPrivateGenerator(TwoGroupSource(), 12, o, 1e-5));
  ASSERT_OK_AND_ASSIGN(auto b, TrainPrivateGenerator(TwoGroupSource(), 12, o, 1e-5));
  EXPECT_EQ(a.generator.GenerateAll(), b.generator.GenerateAll());
  o.seed = 2;
  ASSERT_OK_AND_ASSIGN(auto c, TrainPrivateGenerator(TwoGroupSource(), 12, o, 1e-5));
  EXPECT_NE(a.generator.GenerateAll(), c.generator.GenerateAll());
}

TEST(PrivateGeneratorTest, NonPrivateGeneratorLearnsTheGroups) {
  GanOptions o;
  o.steps = 400;
  o.batch = 16;
  o.latent = 8;
  o.hidden = 16;
  o.generator_lr = 5e-3;
  o.discriminator_lr = 5e-3;
  o.seed = 1;
  ASSERT_OK_AND_ASSIGN(auto r, TrainPrivateGenerator(TwoGroupSource(), 12, o, 1e-5));
  const Eigen::MatrixXd fake = r.generator.GenerateAll();
  // Mean generated preference for the own group's items minus the other group's.
  double margin = 0;
  for (int32_t u = 0; u < 32; ++u) {
    const double first = fake.row(u).head(6).mean(), second = fake.row(u).tail(6).mean();
    margin += u < 16 ? first - second : second - first;
  }
  margin /= 32;
  EXPECT_GT(margin, 0.3);
}

TEST(PrivateGeneratorTest, RejectsBadOptions) {
  GanOptions o;
  o.clip = 0;
  EXPECT_THAT(TrainPrivateGenerator(TwoGroupSource(), 12, o, 1e-5).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  o = GanOptions{};
  EXPECT_THAT(TrainPrivateGenerator(TwoGroupSource(), 12, o, 0).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(TrainPrivateGenerator({{0, 12}}, 12, o, 1e-5).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::cdr
