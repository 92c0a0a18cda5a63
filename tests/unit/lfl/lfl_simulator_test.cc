#include "common/lfl/lfl_simulator.h"

#include <cmath>
#include <limits>

#include "common/data/synthetic.h"
#include "common/dp/rdp_accountant.h"
#include "common/mf/clipping.h"
#include "gtest/gtest.h"

namespace fedmf::lfl {
namespace {

data::Dataset Small() {
  data::SyntheticOptions o;
  o.num_users = 150;
  o.num_items = 60;
  o.density = 0.2;
  auto d = data::GenerateSynthetic(o);
  EXPECT_TRUE(d.ok());
  return *d;
}

LflConfig Config(double epsilon) {
  LflConfig c;
  c.iterations = 30;
  c.dim = 5;
  c.epsilon = epsilon;
  c.seed = 4;
  c.device.pretrain_epochs = 10;
  c.device.finetune_epochs = 10;
  return c;
}

TEST(LflSimulatorTest, NoiselessStage2ImprovesOverStage1Alone) {
  auto r = SimulateLfl(Config(std::numeric_limits<double>::infinity()), Small());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->devices, 150);
  EXPECT_EQ(r->sigma_v, 0);
  EXPECT_LT(r->test.mse, r->stage1_test.mse - 0.05)
      << "stage1 " << r->stage1_test.mse << " final " << r->test.mse;
}

TEST(LflSimulatorTest, PrivateRunReportsEpsilonAndNoise) {
  auto r = SimulateLfl(Config(4.0), Small());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LE(r->epsilon, 4.0 + 1e-9);
  EXPECT_GT(r->epsilon, 3.9);
  EXPECT_GT(r->sigma_v, 0);
  // epsilon is that of the server's worst-case joint view, whose z is at
  // least the accountant's.
  EXPECT_GE(r->server_view_noise_multiplier, r->noise_multiplier);
  auto eps = dp::ComputeEpsilon(1.0, r->server_view_noise_multiplier, 30, 1e-5);
  ASSERT_TRUE(eps.ok());
  EXPECT_DOUBLE_EQ(r->epsilon, *eps);
  const TwoRoundParams dp{150, 0.3, r->sigma_v};
  const double delta = mf::SensitivityOneMatrix(5.0);
  EXPECT_NEAR(r->server_view_noise_multiplier,
              std::sqrt(WorstCaseServerViewVariance(dp)) / delta, 1e-12);
  ASSERT_EQ(r->iterations.size(), 30u);
  for (const auto& it : r->iterations) {
    EXPECT_FALSE(it.skipped);
    EXPECT_EQ(it.round1_survivors, 150);
    EXPECT_NEAR(it.remaining_noise_variance, r->sigma_v * r->sigma_v, 1e-9);
    // What this iteration's server actually saw is no less noisy.
    EXPECT_GE(ServerViewVariance(dp, it.round1_survivors, it.round2_survivors,
                                 it.round1_survivors),
              std::pow(r->server_view_noise_multiplier * delta, 2) * (1 - 1e-12));
  }
}

TEST(LflSimulatorTest, DropoutsAreToleratedUpToOmegaAndSkippedBeyond) {
  LflConfig c = Config(4.0);
  c.dropout_round1 = 0.1;
  c.dropout_round2 = 0.2;
  auto r = SimulateLfl(c, Small());
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& it : r->iterations) {
    EXPECT_FALSE(it.skipped);
    EXPECT_LT(it.round1_survivors, 150);
    EXPECT_LT(it.round2_survivors, it.round1_survivors);
    EXPECT_GE(it.remaining_noise_variance, r->sigma_v * r->sigma_v - 1e-9);
  }
  c.dropout_round1 = 0.6;  // far beyond omega = 0.3
  auto skipped = SimulateLfl(c, Small());
  ASSERT_TRUE(skipped.ok());
  for (const auto& it : skipped->iterations) EXPECT_TRUE(it.skipped);
}

}  // namespace
}  // namespace fedmf::lfl
