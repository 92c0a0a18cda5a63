// Statistical tests of the noise of Hua et al. section 4: the Theorem-2
// decomposition sums to Laplace(0, 2 Delta sqrt(d) / eps) per coordinate,
// Theorem 1's gamma-norm vectors and Lemma 1's Laplace entries.
#include "common/dp/noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/hua/params.h"
#include "common/hua/perturbation.h"
#include "tests/unit/dp/ks_test_util.h"

namespace fedmf::hua {
namespace {

namespace stats = dp::stats;
using random::Csprng;

constexpr double kMinP = 1e-3;  // a correct sampler fails 1 run in 1000

TEST(HuaNoise, LaplaceScaleIsTwoDeltaSqrtDOverEpsilon) {
  EXPECT_DOUBLE_EQ(LaplaceScale(0.5, {1, 5}, 50), 2 * 4 * std::sqrt(50.0) / 0.5);
  EXPECT_DOUBLE_EQ(GammaNormScale(0.5, {1, 5}), 16.0);
  EXPECT_EQ(LaplaceScale(INFINITY, {1, 5}, 50), 0.0);
}

// --epsilon is the whole job's budget: S1 releases V once; S2 / S2-TP / S3
// release every rating's item sum once per iteration, so each release gets
// epsilon / T and T of them compose (basic composition) to epsilon.
TEST(HuaNoise, EpsilonIsTheJobsBudgetSplitOverReleases) {
  HuaParams p;
  p.epsilon = 2.0;
  p.iterations = 40;
  p.scenario = Scenario::kTrusted;
  EXPECT_EQ(ReleasesPerRating(p), 1);
  EXPECT_DOUBLE_EQ(EpsilonPerRelease(p), 2.0);
  for (Scenario s : {Scenario::kUntrusted, Scenario::kUntrustedThirdParty, Scenario::kDynamic}) {
    p.scenario = s;
    EXPECT_EQ(ReleasesPerRating(p), 40);
    EXPECT_DOUBLE_EQ(EpsilonPerRelease(p), 0.05);
    EXPECT_LE(EpsilonPerRelease(p) * ReleasesPerRating(p), p.epsilon * (1 + 1e-12));
    // The noise each release carries is calibrated to the per-release eps.
    EXPECT_DOUBLE_EQ(LaplaceScale(EpsilonPerRelease(p), {1, 5}, 50),
                     40 * LaplaceScale(p.epsilon, {1, 5}, 50));
    EXPECT_NE(PrivacyCaveat(s).find("docs/privacy.md"), std::string::npos);
  }
  p.epsilon = INFINITY;
  EXPECT_TRUE(std::isinf(EpsilonPerRelease(p)));
  EXPECT_NE(PrivacyCaveat(Scenario::kTrusted).find("data-independent U"), std::string::npos);
}

// The recommender's H_j ~ Exp(1)^d, each of k users' C ~ N(0, 1/k):
// sum_s b sqrt(2 H) C_s must be Laplace(0, b) in every coordinate.
void ExpectPiecesSumToLaplace(int32_t k, uint64_t seed) {
  Csprng rng = Csprng::FromSeed(seed);
  const int32_t d = 5;
  const double b = LaplaceScale(0.5, {1, 5}, d);
  std::vector<double> samples;
  for (int trial = 0; trial < 4000; ++trial) {
    const std::vector<double> h = ExponentialVector(rng, d);
    std::vector<double> sum(d, 0.0);
    for (int32_t s = 0; s < k; ++s) {
      std::vector<double> z(d);
      dp::FillGaussian(rng, 1.0, z.data(), z.size());
      const std::vector<double> piece = LaplacePiece(h, z, k, b);
      for (int32_t l = 0; l < d; ++l) sum[l] += piece[l];
    }
    samples.insert(samples.end(), sum.begin(), sum.end());
  }
  const auto ks = stats::KsTest(samples, [b](double x) { return stats::LaplaceCdf(x, b); });
  EXPECT_GT(ks.p_value, kMinP) << "k = " << k << ", D = " << ks.statistic;
}

TEST(HuaNoise, DecomposedPiecesSumToLaplace) {
  ExpectPiecesSumToLaplace(1, 11);
  ExpectPiecesSumToLaplace(7, 12);
  ExpectPiecesSumToLaplace(60, 13);
}

// The KS test has power: the same pieces with C ~ N(0, 1) (forgetting 1/k)
// are rejected.
TEST(HuaNoise, KsRejectsWrongPieceVariance) {
  Csprng rng = Csprng::FromSeed(5);
  const int32_t d = 5, k = 4;
  const double b = 10;
  std::vector<double> samples;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<double> h = ExponentialVector(rng, d);
    std::vector<double> sum(d, 0.0);
    for (int32_t s = 0; s < k; ++s) {
      std::vector<double> z(d);
      dp::FillGaussian(rng, 1.0, z.data(), z.size());
      const std::vector<double> piece = LaplacePiece(h, z, 1, b);
      for (int32_t l = 0; l < d; ++l) sum[l] += piece[l];
    }
    samples.insert(samples.end(), sum.begin(), sum.end());
  }
  EXPECT_LT(stats::KsTest(samples, [b](double x) { return stats::LaplaceCdf(x, b); }).p_value,
            1e-6);
}

TEST(HuaNoise, Theorem1NormIsGammaDistributed) {
  Csprng rng = Csprng::FromSeed(21);
  const data::RatingRange range{1, 5};
  const int32_t d = 50;
  const double eps = 0.8;
  std::vector<double> norms;
  for (int n = 0; n < 3000; ++n) {
    const std::vector<double> eta =
        SampleObjectiveNoise(rng, ObjectiveNoise::kGammaNorm, d, eps, range);
    double s = 0;
    for (double x : eta) s += x * x;
    norms.push_back(std::sqrt(s));
  }
  const double scale = GammaNormScale(eps, range);
  EXPECT_GT(stats::KsTest(norms, [&](double x) { return stats::GammaCdf(x, d, scale); }).p_value,
            kMinP);
}

TEST(HuaNoise, Lemma1EntriesAreLaplace) {
  Csprng rng = Csprng::FromSeed(22);
  const data::RatingRange range{1, 5};
  const int32_t d = 10;
  const double eps = 0.1;
  std::vector<double> entries;
  for (int n = 0; n < 1500; ++n) {
    const std::vector<double> eta =
        SampleObjectiveNoise(rng, ObjectiveNoise::kLaplace, d, eps, range);
    entries.insert(entries.end(), eta.begin(), eta.end());
  }
  const double b = LaplaceScale(eps, range, d);
  EXPECT_GT(stats::KsTest(entries, [b](double x) { return stats::LaplaceCdf(x, b); }).p_value,
            kMinP);
}

TEST(HuaNoise, InfiniteEpsilonGivesNoNoise) {
  Csprng rng = Csprng::FromSeed(1);
  for (double x : SampleObjectiveNoise(rng, ObjectiveNoise::kLaplace, 4, INFINITY, {1, 5})) {
    EXPECT_EQ(x, 0.0);
  }
  for (double x : DifferenceAttackNoise(rng, 4, INFINITY, {1, 5})) EXPECT_EQ(x, 0.0);
}

}  // namespace
}  // namespace fedmf::hua
