// algorithm stats (issue #53): the mechanism's arithmetic, the share
// arithmetic of the noise plan, and a whole in-process federation.
#include "common/fmf/stats_release.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "common/data/synthetic.h"
#include "common/dp/gaussian_dp.h"
#include "common/dp/snapping.h"
#include "common/fmf/simulator.h"
#include "common/fmf/stats_federation.h"
#include "common/fmf/stats_plan.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::StatusIs;

namespace fedmf::fmf {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

JobConfig StatsJob(Granularity granularity, double epsilon) {
  JobConfig c;
  c.setting = Setting::kHfl;
  c.split = SplitKind::kHorizontal;
  c.granularity = granularity;
  c.algorithm = Algorithm::kStatistics;
  c.epsilon = epsilon;
  c.seed = 1;
  return c;
}

TEST(StatsReleaseTest, BiasFitIsTheShrunkClampedMean) {
  // One row, three ratings around centre 3 with public biases 0, 1, -5.
  ASSERT_OK_AND_ASSIGN(stats::Rows rows,
                       stats::MakeRows({{0, 0, 5}, {0, 1, 4}, {0, 2, 1}}, 1, 3, true));
  stats::PublicModel m = stats::EmptyPublicModel(3, 0, 3);
  m.cols(1, 0) = 1;
  m.cols(2, 0) = -5;
  stats::FitOptions f;
  f.bias_l2 = 1;
  f.bias_clip = 2;
  const stats::Mat fit = stats::FitRows(rows, m, f);
  // targets: 2, 0, clamp(3) = 2 -> 4 / (3 + 1)
  EXPECT_NEAR(fit(0, 0), 1.0, 1e-12);
}

TEST(StatsReleaseTest, StatisticsAreTheWeightedGramAndRightHandSide) {
  ASSERT_OK_AND_ASSIGN(stats::Rows rows,
                       stats::MakeRows({{0, 0, 5}, {0, 1, 2}, {1, 1, 4}}, 2, 2, true));
  stats::Mat fit(2, 2);  // [f (dim 1), b]
  fit << 0.5, 0.25, -1.0, 0.0;
  stats::StatsOptions o;
  o.dim = 1;
  o.weighting = stats::Weighting::kPerRow;
  o.residual_clip = 10;
  o.row_clip = 1e9;  // no clipping
  std::vector<double> norms;
  const stats::Statistics s = stats::ComputeStatistics(rows, fit, 3, o, &norms);
  ASSERT_EQ(s.values.size(), 2u * stats::StatsWidth(1));
  ASSERT_EQ(stats::StatsWidth(1), 5);
  const double a0 = 1 / std::sqrt(2.0);
  // Column 1: row 0 (x = [0.5, 1], e = 2 - 3 - 0.25) and row 1 (x = [-1, 1], e = 1).
  const double* c1 = s.values.data() + 5;
  EXPECT_NEAR(c1[0], a0 * 0.25 + 1.0, 1e-12);  // x0 x0
  EXPECT_NEAR(c1[1], a0 * 0.5 - 1.0, 1e-12);   // x0 x1
  EXPECT_NEAR(c1[2], a0 + 1.0, 1e-12);         // x1 x1: the weighted count
  EXPECT_NEAR(c1[3], a0 * -1.25 * 0.5 + 1.0 * -1.0, 1e-12);
  EXPECT_NEAR(c1[4], a0 * -1.25 + 1.0, 1e-12);
  // Row 1's contribution: ||[1, -1, 1]||^2 + ||x||^2 e^2 = 3 + 2.
  EXPECT_NEAR(norms[1], std::sqrt(5.0), 1e-12);
  // With row_clip 1 every row's contribution has norm <= 1.
  o.row_clip = 1;
  const stats::Statistics clipped = stats::ComputeStatistics(rows, fit, 3, o, &norms);
  const stats::Statistics row1_only = [&] {
    auto r = stats::MakeRows({{1, 1, 4}}, 2, 2, true);
    return stats::ComputeStatistics(*r, fit, 3, o);
  }();
  double sq = 0;
  for (double v : row1_only.values) sq += v * v;
  EXPECT_NEAR(std::sqrt(sq), 1.0, 1e-12);
}

TEST(StatsReleaseTest, NoiselessSolveRecoversPlantedBiases) {
  // 50 rows rate every column at centre + column bias; no row bias.
  std::vector<data::Rating> ratings;
  for (int32_t r = 0; r < 50; ++r) {
    for (int32_t c = 0; c < 4; ++c) ratings.push_back({r, c, static_cast<float>(2 + c)});
  }
  ASSERT_OK_AND_ASSIGN(stats::Rows rows, stats::MakeRows(ratings, 50, 4, true));
  stats::StatsOptions o;
  o.weighting = stats::Weighting::kPerRating;
  const stats::PublicModel start = stats::EmptyPublicModel(4, 0, 3.5);
  stats::FitOptions f;
  f.bias_l2 = 1e-9;
  const stats::Statistics s = stats::ReleaseStatistics(rows, start, f, o);
  stats::SolveOptions so;
  so.bias_l2 = 1e-9;
  so.sigma = 0;
  const stats::PublicModel m = stats::SolvePublic(s, start, so);
  // Row biases fitted against zero column biases are the row mean - centre = 0.
  for (int32_t c = 0; c < 4; ++c) EXPECT_NEAR(m.cols(c, 0), c - 1.5, 1e-6);
}

// The noise plan: shares of sigma^2 / (s - c), the sum s shares, the others'
// part s - 1; epsilon meets the target exactly by Gaussian DP, and
// epsilon_alone is the party's own share alone.
TEST(StatsPlanTest, ShareArithmetic) {
  JobConfig job = StatsJob(Granularity::kUser, 4);
  job.stats.factor_releases = 3;
  job.stats.bias_release = true;
  job.stats.bias_budget_share = 0.25;
  job.stats.row_clip = 2;
  ASSERT_OK_AND_ASSIGN(StatsPlan plan, PlanStatistics(job, 10));
  ASSERT_EQ(plan.releases.size(), 4u);
  EXPECT_NEAR(plan.epsilon, 4, 1e-6);
  EXPECT_LE(plan.epsilon, 4);
  ASSERT_OK_AND_ASSIGN(double mu, dp::GaussianDpMu(4, 1e-5));
  EXPECT_NEAR(plan.mu, mu, 1e-12);
  EXPECT_NEAR(plan.mu_alone, mu * 3, 1e-12);  // sqrt(s - c) = 3
  std::vector<double> z;
  for (const StatsReleasePlan& r : plan.releases) {
    // Against the server + 1 party, s - 1 = 9 shares remain: sigma^2.
    z.push_back(std::sqrt(9.0) * r.share_sigma / r.sensitivity);
    EXPECT_NEAR(r.sum_sigma, r.share_sigma * std::sqrt(10.0), 1e-12);
    EXPECT_NEAR(r.others_sigma, r.share_sigma * 3, 1e-12);
  }
  ASSERT_OK_AND_ASSIGN(double eps, dp::ComposedGaussianEpsilon(z, 1e-5));
  EXPECT_NEAR(eps, plan.epsilon, 1e-6);
  // The bias release got a quarter of mu^2.
  EXPECT_NEAR(1 / (z[0] * z[0]), 0.25 * mu * mu, 1e-9);
  EXPECT_GT(plan.epsilon_alone, plan.epsilon);
  // The party's own share alone: its z is the plan's divided by sqrt(9).
  std::vector<double> z_alone;
  for (double zi : z) z_alone.push_back(zi / 3);
  ASSERT_OK_AND_ASSIGN(double alone, dp::ComposedGaussianEpsilon(z_alone, 1e-5));
  EXPECT_NEAR(alone, plan.epsilon_alone, 1e-6);

  job.stats.charge_epsilon_alone = true;
  ASSERT_OK_AND_ASSIGN(StatsPlan strict, PlanStatistics(job, 10));
  EXPECT_NEAR(strict.epsilon_alone, 4, 1e-6);
  EXPECT_LT(strict.epsilon, strict.epsilon_alone);
  EXPECT_EQ(strict.charged_epsilon, strict.epsilon_alone);
  EXPECT_NEAR(strict.releases[0].share_sigma, plan.releases[0].share_sigma * 3, 1e-9);

  // More colluders: each share grows (s - c shares must carry sigma^2).
  job.stats.charge_epsilon_alone = false;
  job.stats.max_colluding_parties = 4;
  ASSERT_OK_AND_ASSIGN(StatsPlan four, PlanStatistics(job, 10));
  EXPECT_NEAR(four.releases[1].share_sigma * std::sqrt(6.0),
              plan.releases[1].share_sigma * std::sqrt(9.0), 1e-9);
}

TEST(StatsPlanTest, FactorReleasesFollowEpsilon) {
  JobConfig job = StatsJob(Granularity::kUser, 1);
  for (auto [eps, releases] : {std::pair{1.0, 1},
                               {16.0, 1},
                               {63.0, 1},
                               {64.0, 2},
                               {256.0, 3},
                               {1024.0, 4},
                               {1e6, 5},
                               {kInf, 5}}) {
    job.epsilon = eps;
    EXPECT_EQ(StatsFactorReleases(job), releases) << eps;
    ASSERT_OK_AND_ASSIGN(StatsPlan plan, PlanStatistics(job, 4));
    EXPECT_EQ(plan.releases.size(), static_cast<size_t>(releases + 1)) << eps;
  }
  job.stats.factor_releases = 7;
  EXPECT_EQ(StatsFactorReleases(job), 7);
}

// After the bias release the budget left is split into as many factor
// releases as the median column's noisy weighted count can carry.
TEST(StatsPlanTest, AdaptiveFactorReleasesFollowTheSignal) {
  JobConfig job = StatsJob(Granularity::kUser, 16);
  stats::Statistics bias = stats::ZeroStatistics(11, 0);
  ASSERT_OK_AND_ASSIGN(StatsPlan one, [&] {
    JobConfig c = job;
    c.stats.factor_releases = 1;
    return PlanStatistics(c, 10);
  }());
  const double sigma1 = one.releases.back().sum_sigma;
  auto with_median = [&](double w) {
    for (int32_t c = 0; c < 11; ++c) bias.values[c * 2] = c == 5 ? w : (c < 5 ? 0 : 1e9);
    return AdaptiveFactorReleases(job, 10, bias);
  };
  ASSERT_OK_AND_ASSIGN(int32_t low, with_median(0.5 * 6 * sigma1));
  EXPECT_EQ(low, 1);
  // T releases have sigma1 * sqrt(T): a median of 6 sigma1 sqrt(3) allows 3.
  ASSERT_OK_AND_ASSIGN(int32_t three, with_median(6 * sigma1 * std::sqrt(3.0) * 1.001));
  EXPECT_EQ(three, 3);
  ASSERT_OK_AND_ASSIGN(int32_t many, with_median(1e6));
  EXPECT_EQ(many, 5);
}

TEST(StatsPlanTest, RefusesImpossibleCollusion) {
  JobConfig job = StatsJob(Granularity::kUser, 1);
  job.stats.max_colluding_parties = 0;
  EXPECT_THAT(PlanStatistics(job, 3), StatusIs(absl::StatusCode::kInvalidArgument));
  job.stats.max_colluding_parties = 3;
  EXPECT_THAT(PlanStatistics(job, 3), StatusIs(absl::StatusCode::kInvalidArgument));
  job.stats.max_colluding_parties = 0;
  EXPECT_TRUE(PlanStatistics(job, 1).ok());
  // VFL per user has no proof: refused by the job validator.
  JobConfig vfl = job;
  vfl.setting = Setting::kVfl;
  vfl.split = SplitKind::kVertical;
  EXPECT_THAT(ValidateJobConfig(vfl), StatusIs(absl::StatusCode::kInvalidArgument));
  vfl.granularity = Granularity::kRating;
  EXPECT_TRUE(ValidateJobConfig(vfl).ok());
  // HFL per rating is valid for stats (biases only), unlike for SGD.
  JobConfig rating = StatsJob(Granularity::kRating, 1);
  EXPECT_TRUE(ValidateJobConfig(rating).ok());
  rating.algorithm = Algorithm::kAlternate;
  EXPECT_THAT(ValidateJobConfig(rating), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StatsPlanTest, NonPrivateAddsNoNoise) {
  ASSERT_OK_AND_ASSIGN(StatsPlan plan, PlanStatistics(StatsJob(Granularity::kUser, kInf), 4));
  EXPECT_FALSE(plan.private_training);
  EXPECT_TRUE(std::isinf(plan.epsilon));
  for (const StatsReleasePlan& r : plan.releases) EXPECT_EQ(r.share_sigma, 0);
}

// The noise shares add up: s shares of variance v have variance s v.
TEST(StatsReleaseTest, SharesSumToTheFederationsNoise) {
  random::Csprng rng = random::Csprng::FromSeed(5);
  stats::Statistics sum = stats::ZeroStatistics(20000, 0);  // 40000 numbers
  for (int k = 0; k < 9; ++k) {
    stats::Statistics share = stats::ZeroStatistics(20000, 0);
    random::Csprng own = rng.Fork(std::to_string(k));
    stats::AddNoise(share, 0.5, own);
    stats::AddInto(sum, share);
  }
  double sq = 0;
  for (double v : sum.values) sq += v * v;
  EXPECT_NEAR(sq / sum.values.size(), 9 * 0.25, 0.05);
}

// A party's noised release lies on a grid that does not depend on its data.
TEST(StatsReleaseTest, SentValuesAreSnappedToAPublicGrid) {
  random::Csprng rng = random::Csprng::FromSeed(9);
  stats::Statistics s = stats::ZeroStatistics(50, 2);
  for (size_t i = 0; i < s.values.size(); ++i) s.values[i] = 0.37 * static_cast<double>(i % 7);
  stats::AddSnappedNoise(s, 0.3, 10, rng);
  const double grid = dp::SnapGranularity(0.3, 10 + 64 * 0.3);
  for (double v : s.values) {
    EXPECT_EQ(std::fmod(v, grid), 0.0);
    EXPECT_LE(std::abs(v), 10 + 64 * 0.3);
  }
  stats::StatsOptions o;
  o.row_clip = 2;
  EXPECT_EQ(stats::MagnitudeBound(o, 30), 60);
  o.weighting = stats::Weighting::kPerRating;
  o.residual_clip = 3;
  EXPECT_EQ(stats::MagnitudeBound(o, 30), 90);
}

data::Federation SmallFederation(uint64_t seed) {
  data::SyntheticOptions o;
  o.num_users = 400;
  o.num_items = 120;
  o.density = 0.15;
  o.seed = 3;
  auto dataset = data::GenerateSynthetic(o);
  EXPECT_TRUE(dataset.ok());
  JobConfig hfl;
  FederationOptions f;
  f.parties = 4;
  f.split_seed = seed;
  auto fed = BuildFederation(hfl, *dataset, f);
  EXPECT_TRUE(fed.ok());
  return *fed;
}

// Without noise the parties' releases carry the federation's data: every
// party's validation prefers a fused model, and the pooled test MSE beats
// the same job whose releases are pure noise (epsilon 1e-6), where the
// parties keep their own model. Deterministic under the seed.
TEST(StatsFederationTest, GainsWithoutNoiseAndKeepsOwnModelUnderPureNoise) {
  const data::Federation fed = SmallFederation(1);
  JobConfig job = StatsJob(Granularity::kUser, kInf);
  job.stats.dim = 5;
  ASSERT_OK_AND_ASSIGN(SimulationResult open, Simulate(job, fed));
  job.epsilon = 1e-6;
  ASSERT_OK_AND_ASSIGN(SimulationResult noise, Simulate(job, fed));
  ASSERT_OK_AND_ASSIGN(SimulationResult again, Simulate(job, fed));
  EXPECT_EQ(noise.test.mse, again.test.mse);
  EXPECT_LT(open.test.mse, noise.test.mse - 0.02);
  int federated = 0, own = 0;
  for (const PartyResult& p : open.parties) federated += p.model_kind == "federated";
  for (const PartyResult& p : noise.parties) own += p.model_kind == "own";
  EXPECT_EQ(federated, 4);
  EXPECT_GE(own, 3);
  ASSERT_TRUE(noise.stats_plan.has_value());
  EXPECT_LE(noise.epsilon, 1e-6);
}

// The releases summed by secure aggregation among the parties (in process)
// give the plain sum exactly: the snapped shares encode exactly in the fixed
// point the protocol uses.
TEST(StatsFederationTest, SecureAggregationGivesThePlainSum) {
  const data::Federation fed = SmallFederation(2);
  JobConfig job = StatsJob(Granularity::kUser, 8);
  job.stats.dim = 4;
  job.stats.secure_aggregation = true;
  ASSERT_OK_AND_ASSIGN(SimulationResult secure, Simulate(job, fed));
  job.stats.secure_aggregation = false;
  ASSERT_OK_AND_ASSIGN(SimulationResult plain, Simulate(job, fed));
  EXPECT_EQ(secure.test.mse, plain.test.mse);
  EXPECT_EQ(secure.validation.mse, plain.validation.mse);
  // Without noise nothing is snapped: the fixed point rounds at 2^-f.
  job.epsilon = kInf;
  ASSERT_OK_AND_ASSIGN(SimulationResult open_plain, Simulate(job, fed));
  job.stats.secure_aggregation = true;
  ASSERT_OK_AND_ASSIGN(SimulationResult open_secure, Simulate(job, fed));
  EXPECT_NEAR(open_secure.test.mse, open_plain.test.mse, 1e-9);
}

}  // namespace
}  // namespace fedmf::fmf
