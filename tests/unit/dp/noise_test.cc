// Noise samplers: exact-geometry checks of the Ziggurat tables, moments and
// Kolmogorov-Smirnov goodness of fit under fixed seeds. The seeds are fixed so
// the tests are deterministic; the thresholds (several standard errors,
// p > 0.001) are what an independent seed would pass with high probability.
#include "common/dp/noise.h"

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/dp/internal/gaussian_ziggurat.h"
#include "gtest/gtest.h"
#include "tests/unit/dp/ks_test_util.h"

namespace fedmf::dp {
namespace {

using stats::KsTest;

struct Moments {
  double mean = 0, variance = 0, kurtosis = 0;  // kurtosis: m4 / m2^2 (3 for a normal)
};

Moments ComputeMoments(const std::vector<double>& x) {
  const double n = static_cast<double>(x.size());
  Moments m;
  m.mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double m2 = 0, m4 = 0;
  for (double v : x) {
    const double c = (v - m.mean) * (v - m.mean);
    m2 += c;
    m4 += c * c;
  }
  m2 /= n;
  m4 /= n;
  m.variance = m2;
  m.kurtosis = m4 / (m2 * m2);
  return m;
}

std::vector<double> Draw(size_t n, const std::function<double()>& sample) {
  std::vector<double> out(n);
  for (double& v : out) v = sample();
  return out;
}

// ---------------------------------------------------------------- Ziggurat

TEST(ZigguratTest, TablesHaveTheMarsagliaTsangGeometry) {
  const internal::ZigguratTables& t = internal::GetZigguratTables();
  EXPECT_DOUBLE_EQ(t.r, 3.6541528853610088);
  EXPECT_NEAR(t.v, 4.928673233974655e-3, 1e-15);
  // Edges decrease strictly to 0 and every layer (including the top one,
  // which the recursion does not force) has area v.
  for (int i = 1; i < internal::kZigLayers; ++i) {
    ASSERT_GT(t.x[i], t.x[i + 1]) << i;
    EXPECT_NEAR(t.x[i] * (t.f[i + 1] - t.f[i]), t.v, 1e-12) << "layer " << i;
  }
  EXPECT_GT(t.x[internal::kZigLayers - 1], 0);
  EXPECT_NEAR(t.x[internal::kZigLayers - 1] * (1.0 - t.f[internal::kZigLayers - 1]), t.v, 1e-9);
}

// ---------------------------------------------------------------- Gaussian

TEST(GaussianTest, SameSeedSameNoiseAndAddMatchesFill) {
  Csprng a = Csprng::FromSeed(7), b = Csprng::FromSeed(7);
  std::vector<double> fill(1000), add(1000, 0.0);
  FillGaussian(a, 1.5, fill.data(), fill.size());
  AddGaussian(b, 1.5, add.data(), add.size());
  EXPECT_EQ(fill, add);
  Csprng c = Csprng::FromSeed(8);
  std::vector<double> other(1000);
  FillGaussian(c, 1.5, other.data(), other.size());
  EXPECT_NE(fill, other);
}

TEST(GaussianTest, AddGaussianAddsToExistingValues) {
  Csprng a = Csprng::FromSeed(9), b = Csprng::FromSeed(9);
  std::vector<double> noise(100), base(100);
  for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<double>(i);
  FillGaussian(a, 2.0, noise.data(), noise.size());
  AddGaussian(b, 2.0, base.data(), base.size());
  for (size_t i = 0; i < base.size(); ++i) EXPECT_DOUBLE_EQ(base[i], i + noise[i]);
}

TEST(GaussianTest, ZeroSigmaGivesZero) {
  Csprng rng = Csprng::FromSeed(1);
  std::vector<double> v(10, 5.0);
  FillGaussian(rng, 0.0, v.data(), v.size());
  for (double x : v) EXPECT_EQ(x, 0.0);
  EXPECT_EQ(SampleGaussian(rng, 0.0), 0.0);
}

TEST(GaussianTest, FillGaussianMoments) {
  constexpr size_t kN = 2'000'000;
  const double sigma = 2.5;
  Csprng rng = Csprng::FromSeed(11);
  std::vector<double> x(kN);
  FillGaussian(rng, sigma, x.data(), kN);
  const Moments m = ComputeMoments(x);
  // Tolerances: ~5 standard errors (mean sigma/sqrt(n), variance
  // sigma^2 sqrt(2/n), kurtosis sqrt(24/n)).
  EXPECT_NEAR(m.mean, 0.0, 5 * sigma / std::sqrt(kN));
  EXPECT_NEAR(m.variance, sigma * sigma, 5 * sigma * sigma * std::sqrt(2.0 / kN));
  EXPECT_NEAR(m.kurtosis, 3.0, 5 * std::sqrt(24.0 / kN));
}

TEST(GaussianTest, SampleGaussianMoments) {
  constexpr size_t kN = 500'000;
  Csprng rng = Csprng::FromSeed(12);
  const Moments m = ComputeMoments(Draw(kN, [&] { return SampleGaussian(rng, 0.5); }));
  EXPECT_NEAR(m.mean, 0.0, 5 * 0.5 / std::sqrt(kN));
  EXPECT_NEAR(m.variance, 0.25, 5 * 0.25 * std::sqrt(2.0 / kN));
  EXPECT_NEAR(m.kurtosis, 3.0, 5 * std::sqrt(24.0 / kN));
}

TEST(GaussianTest, FillGaussianPassesKs) {
  for (uint64_t seed : {21u, 22u, 23u}) {
    Csprng rng = Csprng::FromSeed(seed);
    std::vector<double> x(1'000'000);
    FillGaussian(rng, 1.7, x.data(), x.size());
    const auto ks = KsTest(x, [](double v) { return stats::NormalCdf(v, 1.7); });
    EXPECT_GT(ks.p_value, 0.001) << "seed " << seed << " D=" << ks.statistic;
  }
}

TEST(GaussianTest, SampleGaussianPassesKs) {
  Csprng rng = Csprng::FromSeed(24);
  const auto ks = KsTest(Draw(200'000, [&] { return SampleGaussian(rng, 3.0); }),
                         [](double v) { return stats::NormalCdf(v, 3.0); });
  EXPECT_GT(ks.p_value, 0.001) << "D=" << ks.statistic;
}

TEST(GaussianTest, TailBeyondRHasTheRightMassAndShape) {
  // The tail path (|x| > r) is rare (2.6e-4); check its frequency and its
  // conditional distribution separately, since a whole-sample KS barely sees it.
  const double r = internal::GetZigguratTables().r;
  constexpr size_t kN = 8'000'000;
  Csprng rng = Csprng::FromSeed(25);
  std::vector<double> x(kN);
  FillGaussian(rng, 1.0, x.data(), kN);
  std::vector<double> tail;
  for (double v : x) {
    if (std::fabs(v) > r) tail.push_back(std::fabs(v));
  }
  const double p = std::erfc(r / std::sqrt(2.0));  // P(|X| > r)
  const double expected = p * kN;
  EXPECT_NEAR(static_cast<double>(tail.size()), expected, 5 * std::sqrt(expected));
  const double tail_mass = std::erfc(r / std::sqrt(2.0));
  const auto ks =
      KsTest(tail, [&](double v) { return 1.0 - std::erfc(v / std::sqrt(2.0)) / tail_mass; });
  EXPECT_GT(ks.p_value, 0.001) << "D=" << ks.statistic << " n=" << tail.size();
}

TEST(GaussianTest, LayerRegionsMatchNormalProbabilities) {
  // Chi-square over the Ziggurat's own edges: bins [x[i+1], x[i]) of |X|
  // exercise each layer's rectangle/wedge split directly.
  const internal::ZigguratTables& t = internal::GetZigguratTables();
  constexpr size_t kN = 4'000'000;
  Csprng rng = Csprng::FromSeed(26);
  std::vector<double> x(kN);
  FillGaussian(rng, 1.0, x.data(), kN);
  // Bin k (k = 1..255) holds |X| in [x[k+1], x[k]); bin 0 holds |X| >= r.
  std::vector<double> counts(internal::kZigLayers, 0.0);
  for (double v : x) {
    const double a = std::fabs(v);
    // Edges decrease with k: binary search on the descending table.
    int lo = 1, hi = internal::kZigLayers;  // find largest k with x[k] > a
    if (a >= t.x[1]) {
      counts[0] += 1;
      continue;
    }
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      (t.x[mid] > a ? lo : hi) = mid;
    }
    counts[lo] += 1;
  }
  double chi2 = 0;
  const auto mass = [](double a) { return std::erfc(a / std::sqrt(2.0)); };  // P(|X| > a)
  for (int k = 0; k < internal::kZigLayers; ++k) {
    const double p = k == 0 ? mass(t.x[1]) : mass(t.x[k + 1]) - mass(t.x[k]);
    const double e = p * kN;
    chi2 += (counts[k] - e) * (counts[k] - e) / e;
  }
  // 255 degrees of freedom: mean 255, sd ~22.6; the 0.999 quantile is ~330.
  EXPECT_LT(chi2, 330.0);
}

// ---------------------------------------------------------------- Laplace

TEST(LaplaceTest, MomentsAndKs) {
  const double b = 1.3;
  Csprng rng = Csprng::FromSeed(31);
  const std::vector<double> x = Draw(500'000, [&] { return SampleLaplace(rng, b); });
  const Moments m = ComputeMoments(x);
  const double n = static_cast<double>(x.size());
  EXPECT_NEAR(m.mean, 0.0, 5 * std::sqrt(2.0) * b / std::sqrt(n));
  // Var(X^2) for Laplace is 20 b^4, so the variance's SE is sqrt(20/n) b^2.
  EXPECT_NEAR(m.variance, 2 * b * b, 5 * std::sqrt(20.0 / n) * b * b);
  EXPECT_NEAR(m.kurtosis, 6.0, 0.2);  // excess kurtosis 3
  const auto ks = KsTest(x, [&](double v) { return stats::LaplaceCdf(v, b); });
  EXPECT_GT(ks.p_value, 0.001) << "D=" << ks.statistic;
}

// ---------------------------------------------------------------- Exponential

TEST(ExponentialTest, MomentsAndKs) {
  const double lambda = 0.8;
  Csprng rng = Csprng::FromSeed(41);
  const std::vector<double> x = Draw(500'000, [&] { return SampleExponential(rng, lambda); });
  const Moments m = ComputeMoments(x);
  const double n = static_cast<double>(x.size());
  EXPECT_NEAR(m.mean, 1 / lambda, 5 / (lambda * std::sqrt(n)));
  EXPECT_NEAR(m.variance, 1 / (lambda * lambda), 5 * std::sqrt(8.0 / n) / (lambda * lambda));
  for (double v : x) ASSERT_GT(v, 0.0);
  const auto ks = KsTest(x, [&](double v) { return stats::ExponentialCdf(v, lambda); });
  EXPECT_GT(ks.p_value, 0.001) << "D=" << ks.statistic;
}

// ---------------------------------------------------------------- Gamma

class GammaTest : public ::testing::TestWithParam<double> {};

TEST_P(GammaTest, MomentsAndKs) {
  const double shape = GetParam();
  const double scale = 1.7;
  Csprng rng = Csprng::FromSeed(51 + static_cast<uint64_t>(shape * 100));
  const std::vector<double> x = Draw(300'000, [&] { return SampleGamma(rng, shape, scale); });
  const Moments m = ComputeMoments(x);
  const double n = static_cast<double>(x.size());
  const double var = shape * scale * scale;
  EXPECT_NEAR(m.mean, shape * scale, 5 * std::sqrt(var / n));
  // Var of the sample variance ~ (mu4 - sigma^4)/n with mu4 = 3k(k+2) theta^4.
  const double mu4 = 3 * shape * (shape + 2) * std::pow(scale, 4);
  EXPECT_NEAR(m.variance, var, 5 * std::sqrt((mu4 - var * var) / n));
  for (double v : x) ASSERT_GE(v, 0.0);
  const auto ks = KsTest(x, [&](double v) { return stats::GammaCdf(v, shape, scale); });
  EXPECT_GT(ks.p_value, 0.001) << "shape " << shape << " D=" << ks.statistic;
}

// Shapes below 1 take the boosting path.
INSTANTIATE_TEST_SUITE_P(Shapes, GammaTest, ::testing::Values(0.3, 0.9, 1.0, 2.5, 10.0, 100.0));

TEST(GammaCdfHelperTest, AgreesWithClosedForms) {
  // Shape 1 is exponential; shape 2 has CDF 1 - e^-x (1 + x). Guards the
  // KS reference itself.
  for (double x : {0.01, 0.5, 1.0, 3.0, 10.0, 40.0}) {
    EXPECT_NEAR(stats::GammaCdf(x, 1.0, 1.0), -std::expm1(-x), 1e-13) << x;
    EXPECT_NEAR(stats::GammaCdf(x, 2.0, 1.0), 1 - std::exp(-x) * (1 + x), 1e-13) << x;
  }
}

// ---------------------------------------------------------------- Gamma-norm vectors

TEST(GammaNormVectorTest, NormsAreGammaAndDirectionsUniform) {
  constexpr int kD = 5;
  constexpr size_t kN = 100'000;
  const double scale = 0.7;
  Csprng rng = Csprng::FromSeed(61);
  std::vector<double> norms;
  std::vector<double> direction_sum(kD, 0.0), direction_sq(kD, 0.0);
  for (size_t s = 0; s < kN; ++s) {
    const std::vector<double> v = SampleGammaNormVector(rng, kD, scale);
    ASSERT_EQ(v.size(), static_cast<size_t>(kD));
    double n2 = 0;
    for (double x : v) n2 += x * x;
    const double norm = std::sqrt(n2);
    norms.push_back(norm);
    for (int i = 0; i < kD; ++i) {
      direction_sum[i] += v[i] / norm;
      direction_sq[i] += v[i] * v[i] / n2;
    }
  }
  const auto ks = KsTest(norms, [&](double r) { return stats::GammaCdf(r, kD, scale); });
  EXPECT_GT(ks.p_value, 0.001) << "D=" << ks.statistic;
  // A uniform unit vector has E[u_i] = 0, E[u_i^2] = 1/d, Var(u_i) = 1/d.
  for (int i = 0; i < kD; ++i) {
    EXPECT_NEAR(direction_sum[i] / kN, 0.0, 5 * std::sqrt(1.0 / kD / kN)) << i;
    EXPECT_NEAR(direction_sq[i] / kN, 1.0 / kD, 0.01) << i;
  }
}

TEST(GammaNormVectorTest, OneDimensionIsLaplace) {
  // d = 1: density ∝ exp(-|x|/scale), exactly Laplace(scale).
  Csprng rng = Csprng::FromSeed(62);
  const std::vector<double> x =
      Draw(200'000, [&] { return SampleGammaNormVector(rng, 1, 2.0)[0]; });
  const auto ks = KsTest(x, [](double v) { return stats::LaplaceCdf(v, 2.0); });
  EXPECT_GT(ks.p_value, 0.001) << "D=" << ks.statistic;
}

// ---------------------------------------------------------------- invalid input

TEST(NoiseDeathTest, InvalidParametersAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Csprng rng = Csprng::FromSeed(1);
  EXPECT_DEATH(SampleGaussian(rng, -1.0), "sigma");
  EXPECT_DEATH(SampleGaussian(rng, std::nan("")), "sigma");
  EXPECT_DEATH(SampleLaplace(rng, -0.5), "Laplace");
  EXPECT_DEATH(SampleExponential(rng, 0.0), "lambda");
  EXPECT_DEATH(SampleGamma(rng, 0.0, 1.0), "shape");
  EXPECT_DEATH(SampleGammaNormVector(rng, 0, 1.0), "dimension");
}

}  // namespace
}  // namespace fedmf::dp
