// The server's joint view of an LFL iteration (S1, S2) and the calibration
// that makes it as noisy as the Gaussian mechanism whose epsilon is reported
// (issue #14 finding 1; docs/privacy.md, section lfl).
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/lfl/lfl_simulator.h"
#include "common/lfl/two_round_dp.h"
#include "common/mf/clipping.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::lfl {
namespace {

// The GLS variance of G computed from scratch for an explicit pattern: each
// device is in U1 (its xi_i in S1) or not, in U2 (its -xi_i + xi'_i in S2) or
// not, and was told its own |U1|. Builds the 2x2 covariance of the noise in
// (S1, S2) term by term and returns 1 / [Sigma^-1]_11, the variance of the
// best linear unbiased estimate of G (S2 has mean 0, S1 mean G).
struct DeviceRole {
  bool in_u1 = false;
  bool in_u2 = false;
  int64_t announced = 0;
};

double GlsVarianceFromCovariance(const TwoRoundParams& p, const std::vector<DeviceRole>& roles) {
  const double v1 = Round1Variance(p);
  double s11 = 0, s12 = 0, s22 = 0;
  for (const DeviceRole& r : roles) {
    if (r.in_u1) s11 += v1;
    if (r.in_u2) {
      s22 += v1 + Round2Variance(p, r.announced);
      if (r.in_u1) s12 -= v1;  // -xi_i in S2 against +xi_i in S1
    }
  }
  if (s22 == 0) return s11;  // no round 2: S1 alone
  const double det = s11 * s22 - s12 * s12;
  const double inv11 = s22 / det;
  return 1.0 / inv11;
}

std::vector<DeviceRole> Pattern(int64_t n, int64_t u1, int64_t u2, int64_t announced) {
  std::vector<DeviceRole> roles(n);
  for (int64_t i = 0; i < n; ++i) roles[i] = {i < u1, i < u2, announced};
  return roles;
}

double Delta(const LflConfig& c) { return mf::SensitivityOneMatrix(c.device.rating_max); }

// Theorem 5 claims the server sees noise of variance sigma_v^2 whatever drops
// out. It does not: with no dropout it has sigma_v^2 / (2 - omega), and
// sigma_v^2 / 2 when |U1| = (1 - omega) n. These are what made the old
// calibration (sigma_v = z Delta) report an epsilon that did not hold.
TEST(ServerViewTest, TheoremFiveOverstatesTheServersNoise) {
  const TwoRoundParams p{943, 0.3, 1.0};
  EXPECT_NEAR(ServerViewVariance(p, 943, 943, 943), 1.0 / 1.7, 1e-12);
  EXPECT_NEAR(RemainingVariance(p, 943, 943), 1.0, 1e-12);  // the update's noise
  const TwoRoundParams q{10, 0.3, 1.0};                     // (1 - omega) n = 7 exactly
  EXPECT_NEAR(ServerViewVariance(q, 7, 7, 7), 0.5, 1e-12);
  // Round 2 aborted: S1 alone, |U1| zeta1 sigma_v^2.
  EXPECT_NEAR(ServerViewVariance(q, 8, 0, 8), 8.0 / 7.0, 1e-12);
}

TEST(ServerViewTest, ClosedFormMatchesTheCovarianceOfTheViews) {
  const TwoRoundParams p{30, 0.3, 2.5};
  for (int64_t u1 = MinSurvivors(p); u1 <= 30; ++u1) {
    for (int64_t u2 = 0; u2 <= u1; ++u2) {
      for (int64_t a : {MinSurvivors(p), u1, int64_t{30}}) {
        const double want = GlsVarianceFromCovariance(p, Pattern(30, u1, u2, a));
        EXPECT_NEAR(ServerViewVariance(p, u1, u2, a), want, 1e-12 * want)
            << u1 << " " << u2 << " " << a;
      }
    }
  }
  EXPECT_EQ(ServerViewVariance({10, 0.3, 0.0}, 10, 10, 10), 0.0);
}

// Every (n, omega, |U1|, |U2|, announcement) the protocol allows, for small
// n: the minimum is WorstCaseServerViewVariance, and with the job's sigma_v
// it is still >= (z Delta)^2.
TEST(ServerViewTest, WorstCaseIsTheMinimumOverEveryAllowedPattern) {
  for (double omega : {0.0, 0.1, 0.3, 0.5, 0.75}) {
    LflConfig c;
    c.omega = omega;
    c.epsilon = 1.0;
    double z = 0, eps = 0;
    absl::StatusOr<double> sigma = CalibrateSigmaV(c, &z, &eps);
    ASSERT_THAT(sigma, IsOk());
    const double target = z * z * Delta(c) * Delta(c);
    for (int64_t n = 2; n <= 40; ++n) {
      const TwoRoundParams p{n, omega, *sigma};
      const int64_t lo = MinSurvivors(p);
      double minimum = INFINITY;
      for (int64_t u1 = lo; u1 <= n; ++u1) {
        for (int64_t u2 = 0; u2 <= u1; ++u2) {
          for (int64_t a = lo; a <= n; ++a) {
            minimum = std::min(minimum, ServerViewVariance(p, u1, u2, a));
          }
        }
      }
      const double worst = WorstCaseServerViewVariance(p);
      EXPECT_NEAR(minimum, worst, 1e-12 * worst) << "n=" << n << " omega=" << omega;
      EXPECT_GE(worst, target) << "n=" << n << " omega=" << omega;
      // The n-free bound the calibration uses.
      EXPECT_GE(worst * ServerViewVarianceInflation(omega), (*sigma) * (*sigma) * (1 - 1e-12));
    }
  }
}

// Random patterns on ML-100K-sized jobs, including what only a lying server
// can do: a different announced |U1| per device, and round-2 answers from
// devices whose round-1 input is not in S1.
TEST(ServerViewTest, RandomPatternsStayAboveTheReportedVariance) {
  random::Csprng rng = random::Csprng::FromSeed(14);
  for (double omega : {0.1, 0.3, 0.5}) {
    LflConfig c;
    c.omega = omega;
    c.epsilon = 4.0;
    absl::StatusOr<LflPrivacy> priv = CalibrateLflPrivacy(c, 943);
    ASSERT_THAT(priv, IsOk());
    const TwoRoundParams p{943, omega, priv->sigma_v};
    const double reported = std::pow(priv->server_view_noise_multiplier * Delta(c), 2);
    const double accountant = std::pow(priv->noise_multiplier * Delta(c), 2);
    EXPECT_GE(reported, accountant);
    EXPECT_NEAR(reported, WorstCaseServerViewVariance(p), 1e-9 * reported);
    const int64_t lo = MinSurvivors(p);
    int decodable = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<DeviceRole> roles(943);
      int64_t u1 = 0;
      const double keep1 = (1 - omega) + omega * rng.NextDouble();
      const double keep2 = rng.NextDouble();
      for (DeviceRole& r : roles) {
        r.in_u1 = rng.NextDouble() < keep1;
        r.in_u2 = rng.NextDouble() < keep2;
        r.announced =
            lo + static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(943 - lo + 1)));
        u1 += r.in_u1 ? 1 : 0;
      }
      if (u1 < lo) continue;  // the server decodes nothing
      ++decodable;
      const double v = GlsVarianceFromCovariance(p, roles);
      EXPECT_GE(v, reported * (1 - 1e-12)) << "trial " << trial;
    }
    EXPECT_GE(decodable, 100) << "omega " << omega;
    // The worst corner itself, built device by device.
    EXPECT_NEAR(GlsVarianceFromCovariance(p, Pattern(943, lo, lo, 943)), reported, 1e-9 * reported);
  }
}

// The calibration: sigma_v is z Delta sqrt((2 - omega) / (1 - omega)), and
// the pre-#14 one (sigma_v = z Delta) leaves the server's view short of
// (z Delta)^2 — by the factor (2 - omega) without dropout.
TEST(ServerViewTest, CalibrationInflatesSigmaAndOldCalibrationFails) {
  LflConfig c;
  c.iterations = 10;
  c.omega = 0.3;
  c.epsilon = 1.0;
  absl::StatusOr<LflPrivacy> priv = CalibrateLflPrivacy(c, 943);
  ASSERT_THAT(priv, IsOk());
  // The accountant's z (docs/archive/results-2026.md).
  EXPECT_NEAR(priv->noise_multiplier, 12.79, 0.01);
  EXPECT_NEAR(priv->sigma_v / (priv->noise_multiplier * Delta(c)), std::sqrt(1.7 / 0.7), 1e-8);
  EXPECT_GE(priv->server_view_noise_multiplier, priv->noise_multiplier);
  EXPECT_LE(priv->epsilon, 1.0);
  EXPECT_GT(priv->epsilon, 0.99);

  const double target = std::pow(priv->noise_multiplier * Delta(c), 2);
  const TwoRoundParams old{943, 0.3, priv->noise_multiplier * Delta(c)};
  EXPECT_NEAR(ServerViewVariance(old, 943, 943, 943), target / 1.7, 1e-9 * target);
  EXPECT_LT(WorstCaseServerViewVariance(old), 0.42 * target);

  // epsilon is never above the target, for any n and omega.
  for (double eps : {0.5, 1.0, 4.0, 8.0}) {
    for (double omega : {0.0, 0.3, 0.6}) {
      for (int64_t n : {2, 7, 10, 943, 70000}) {
        c.epsilon = eps;
        c.omega = omega;
        absl::StatusOr<LflPrivacy> q = CalibrateLflPrivacy(c, n);
        ASSERT_THAT(q, IsOk());
        EXPECT_LE(q->epsilon, eps) << eps << " " << omega << " " << n;
        EXPECT_GE(q->server_view_noise_multiplier, q->noise_multiplier);
      }
    }
  }
  c.epsilon = INFINITY;
  absl::StatusOr<LflPrivacy> none = CalibrateLflPrivacy(c, 943);
  ASSERT_THAT(none, IsOk());
  EXPECT_EQ(none->sigma_v, 0);
  EXPECT_EQ(none->server_view_noise_multiplier, 0);
  EXPECT_TRUE(std::isinf(none->epsilon));
}

// Monte Carlo on the devices' real noise code (DeviceNoise): n devices with
// known gradients run both rounds; the server forms S1, S2 and its GLS
// estimate G^ = S1 + w S2. Each entry of the vector is an independent sample
// of G^ - G, so one iteration with a long vector gives many samples.
struct Empirical {
  double gls = 0;       // mean square of G^ - G
  double analytic = 0;  // ServerViewVariance for the pattern
};

Empirical RunIteration(const TwoRoundParams& p, int64_t u1, int64_t u2, int64_t announced,
                       size_t len, uint64_t seed) {
  random::Csprng root = random::Csprng::FromSeed(seed);
  std::vector<double> s1(len, 0.0), s2(len, 0.0), g(len, 0.0);
  for (int64_t i = 0; i < p.num_devices; ++i) {
    random::Csprng rng = root.Fork(absl::StrCat("device-", i));
    DeviceNoise noise(p);
    std::vector<double> x(len);
    for (size_t k = 0; k < len; ++k) x[k] = std::sin(static_cast<double>(i * 31 + k));
    const std::vector<double> grad = x;
    noise.AddRound1Noise(x, rng);
    if (i >= u1) continue;  // its input is not in the sum
    for (size_t k = 0; k < len; ++k) {
      s1[k] += x[k];
      g[k] += grad[k];
    }
    if (i >= u2) continue;
    absl::StatusOr<std::vector<double>> bar = noise.Round2Replacement(announced, rng);
    EXPECT_THAT(bar, IsOk());
    for (size_t k = 0; k < len; ++k) s2[k] += (*bar)[k];
  }
  const double w = u2 > 0 ? ServerGlsWeight(p, announced) : 0.0;
  Empirical out;
  for (size_t k = 0; k < len; ++k) {
    const double e = s1[k] + w * s2[k] - g[k];
    out.gls += e * e;
  }
  out.gls /= static_cast<double>(len);
  out.analytic = ServerViewVariance(p, u1, u2, announced);
  return out;
}

TEST(ServerViewTest, MonteCarloGlsVarianceOfTheRealDeviceNoise) {
  LflConfig c;
  c.iterations = 10;
  c.omega = 0.3;
  c.epsilon = 1.0;
  constexpr int64_t kN = 20;  // MinSurvivors = 14
  absl::StatusOr<LflPrivacy> priv = CalibrateLflPrivacy(c, kN);
  ASSERT_THAT(priv, IsOk());
  const double reported = std::pow(priv->server_view_noise_multiplier * Delta(c), 2);
  const TwoRoundParams p{kN, 0.3, priv->sigma_v};
  ASSERT_EQ(MinSurvivors(p), 14);
  constexpr size_t kLen = 12000;
  // A variance estimate over kLen samples has relative std-dev sqrt(2 / kLen)
  // = 1.3%; 5 of those is the tolerance.
  const double tol = 5 * std::sqrt(2.0 / kLen);
  struct Case {
    int64_t u1, u2, announced;
  };
  const Case cases[] = {{20, 20, 20},  // no dropout
                        {14, 14, 20},  // the worst case (a lying announcement)
                        {14, 14, 14},  // the honest worst case
                        {17, 9, 17},   // some drop in each round
                        {14, 0, 14}};  // round 2 aborted
  uint64_t seed = 1;
  for (const Case& k : cases) {
    const Empirical e = RunIteration(p, k.u1, k.u2, k.announced, kLen, seed++);
    EXPECT_NEAR(e.gls / e.analytic, 1.0, tol) << k.u1 << " " << k.u2 << " " << k.announced;
    EXPECT_GE(e.gls, reported * (1 - tol)) << k.u1 << " " << k.u2 << " " << k.announced;
  }
  // The same estimator against the pre-#14 calibration sigma_v = z Delta
  // falls far short of the variance its epsilon assumed.
  const TwoRoundParams old{kN, 0.3, priv->noise_multiplier * Delta(c)};
  const Empirical e = RunIteration(old, 20, 20, 20, kLen, 99);
  const double assumed = std::pow(priv->noise_multiplier * Delta(c), 2);
  EXPECT_LT(e.gls, assumed * (1 - tol));
  EXPECT_NEAR(e.gls / assumed, 1.0 / 1.7, tol);
}

}  // namespace
}  // namespace fedmf::lfl
