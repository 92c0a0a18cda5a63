#include "common/mf/sgd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <tuple>
#include <vector>

#include "common/dp/noise.h"
#include "common/dp/snapping.h"
#include "common/mf/clipping.h"
#include "common/mf/sampling.h"
#include "tests/unit/mf/test_util.h"

namespace fedmf::mf {
namespace {

using data::Rating;
using random::Csprng;
using testing::LowRankRatings;
using testing::UniformMatrix;

// Loss summed over the listed users' ratings: sum (x - <u,v>)^2.
double Loss(const RatingMatrix& x, const std::vector<int32_t>& users, const Matrix& u,
            const Matrix& v) {
  double l = 0;
  for (const int32_t i : users) {
    for (const auto& e : x.Row(i)) {
      const double err = e.value - u.row(i).dot(v.row(e.item));
      l += err * err;
    }
  }
  return l;
}

class GradientDimTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(GradientDimTest, MatchesFiniteDifferences) {
  const int32_t dim = GetParam();
  Csprng rng = Csprng::FromSeed(20 + dim);
  const RatingMatrix x(12, 9, LowRankRatings(12, 9, 3, 0.5, rng));
  const Matrix u = UniformMatrix(12, dim, 0.0, 0.6, rng);
  const Matrix v = UniformMatrix(9, dim, 0.0, 0.6, rng);
  const std::vector<int32_t> users = {0, 2, 3, 7, 11};
  Matrix gu = Matrix::Zero(12, dim);
  Matrix gv = Matrix::Zero(9, dim);
  AccumulateGradients(x, users, u, v, &gu, &gv);

  const double h = 1e-6;
  for (Eigen::Index r = 0; r < u.rows(); ++r) {
    for (Eigen::Index c = 0; c < dim; ++c) {
      Matrix up = u, um = u;
      up(r, c) += h;
      um(r, c) -= h;
      const double fd = (Loss(x, users, up, v) - Loss(x, users, um, v)) / (2 * h);
      EXPECT_NEAR(gu(r, c), fd, 1e-6 * (1 + std::abs(fd))) << r << "," << c;
    }
  }
  for (Eigen::Index r = 0; r < v.rows(); ++r) {
    for (Eigen::Index c = 0; c < dim; ++c) {
      Matrix vp = v, vm = v;
      vp(r, c) += h;
      vm(r, c) -= h;
      const double fd = (Loss(x, users, u, vp) - Loss(x, users, u, vm)) / (2 * h);
      EXPECT_NEAR(gv(r, c), fd, 1e-6 * (1 + std::abs(fd))) << r << "," << c;
    }
  }
  // Rows of users outside the batch get no gradient.
  EXPECT_EQ(gu.row(1).squaredNorm(), 0.0);
}

TEST_P(GradientDimTest, AccumulatesAndAcceptsNullOutputs) {
  const int32_t dim = GetParam();
  Csprng rng = Csprng::FromSeed(40 + dim);
  const RatingMatrix x(10, 8, LowRankRatings(10, 8, 2, 0.6, rng));
  const Matrix u = UniformMatrix(10, dim, 0.0, 0.5, rng);
  const Matrix v = UniformMatrix(8, dim, 0.0, 0.5, rng);
  std::vector<int32_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  Matrix gu = Matrix::Zero(10, dim);
  Matrix gv = Matrix::Zero(8, dim);
  AccumulateGradients(x, all, u, v, &gu, &gv);

  Matrix gu_only = Matrix::Constant(10, dim, 1.0);  // "adds to", not "overwrites"
  AccumulateGradients(x, all, u, v, &gu_only, nullptr);
  EXPECT_LE((gu_only - Matrix::Constant(10, dim, 1.0) - gu).cwiseAbs().maxCoeff(), 1e-12);
  Matrix gv_only = Matrix::Zero(8, dim);
  AccumulateGradients(x, all, u, v, nullptr, &gv_only);
  EXPECT_EQ(gv_only, gv);
  AccumulateGradients(x, all, u, v, nullptr, nullptr);  // no-op, must not crash
  Matrix g_empty = Matrix::Zero(10, dim);
  AccumulateGradients(x, {}, u, v, &g_empty, nullptr);
  EXPECT_EQ(g_empty.squaredNorm(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Dims, GradientDimTest, ::testing::Values(4, 10, 20));

// One user's V-gradient alone (AccumulateGradients with a batch of one).
Matrix UserVGradient(const RatingMatrix& x, int32_t i, const Matrix& u, const Matrix& v) {
  Matrix g = Matrix::Zero(v.rows(), v.cols());
  AccumulateGradients(x, {i}, u, v, nullptr, &g);
  return g;
}

TEST(UserClippedGradientTest, EachUserIsScaledToTheClipNormAndOnlyThen) {
  Csprng rng = Csprng::FromSeed(77);
  const RatingMatrix x(8, 30, LowRankRatings(8, 30, 3, 0.7, rng));
  const Matrix u = UniformMatrix(8, 5, 0.0, 0.8, rng);
  const Matrix v = UniformMatrix(30, 5, 0.0, 0.8, rng);
  const std::vector<int32_t> batch = {0, 3, 5, 6};
  // The norms of the users' unclipped contributions, to put C between them.
  std::vector<double> norms;
  for (int32_t i : batch) norms.push_back(UserVGradient(x, i, u, v).norm());
  std::vector<double> sorted = norms;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_LT(sorted.front(), sorted.back());
  const double clip = 0.5 * (sorted[1] + sorted[2]);
  Matrix expected = Matrix::Zero(30, 5);
  for (size_t k = 0; k < batch.size(); ++k) {
    const double scale = norms[k] > clip ? clip / norms[k] : 1.0;
    expected += scale * UserVGradient(x, batch[k], u, v);
  }
  Matrix got = Matrix::Constant(30, 5, 0.25);  // adds to, does not overwrite
  AccumulateUserClippedVGradient(x, batch, u, v, clip, got);
  EXPECT_LE((got - Matrix::Constant(30, 5, 0.25) - expected).cwiseAbs().maxCoeff(), 1e-12);
  // A clip norm above every user's norm is plain AccumulateGradients.
  Matrix loose = Matrix::Zero(30, 5);
  AccumulateUserClippedVGradient(x, batch, u, v, 2 * sorted.back(), loose);
  Matrix plain = Matrix::Zero(30, 5);
  AccumulateGradients(x, batch, u, v, nullptr, &plain);
  EXPECT_LE((loose - plain).cwiseAbs().maxCoeff(), 1e-12);
  // Each user alone lands at norm min(its norm, C).
  for (size_t k = 0; k < batch.size(); ++k) {
    Matrix one = Matrix::Zero(30, 5);
    AccumulateUserClippedVGradient(x, {batch[k]}, u, v, clip, one);
    EXPECT_NEAR(one.norm(), std::min(norms[k], clip), 1e-9) << "user " << batch[k];
  }
}

TEST(UserClippedGradientTest, DuplicateRatingsOfOneItemAreMergedBeforeTheNorm) {
  // Two ratings of one item add in the same row: the norm of the sum, not the
  // root of the summed squares, must be bounded (here 2x the single rating).
  const RatingMatrix x(1, 3, {{0, 1, 5.0f}, {0, 1, 5.0f}});
  const Matrix u = Matrix::Constant(1, 2, 0.5);
  const Matrix v = Matrix::Zero(3, 2);
  const double full = UserVGradient(x, 0, u, v).norm();  // |2 * -2 * 5| * ||u||
  EXPECT_NEAR(full, 20.0 * std::sqrt(0.5), 1e-12);
  Matrix g = Matrix::Zero(3, 2);
  AccumulateUserClippedVGradient(x, {0}, u, v, 3.0, g);
  EXPECT_NEAR(g.norm(), 3.0, 1e-12);
  EXPECT_EQ(g.row(0).squaredNorm() + g.row(2).squaredNorm(), 0.0);
}

TEST(NoisyGradientStepTest, ZeroSigmaIsTheManualFormulaAndDrawsNothing) {
  Csprng data_rng = Csprng::FromSeed(50);
  const Matrix m0 = UniformMatrix(40, 20, 0.0, 0.8, data_rng);
  const Matrix g = UniformMatrix(40, 20, -30.0, 30.0, data_rng);
  const double lr = 0.05, normalizer = 7.0, r = 5.0;
  Matrix expected = m0 - (lr / normalizer) * g;
  ClipEmbeddings(expected, r);

  Csprng rng = Csprng::FromSeed(51);
  Matrix m = m0;
  NoisyGradientStep(m, g, /*sigma=*/0.0, normalizer, lr, r, rng);
  EXPECT_LE((m - expected).cwiseAbs().maxCoeff(), 1e-15);
  Csprng fresh = Csprng::FromSeed(51);
  EXPECT_EQ(rng.NextU64(), fresh.NextU64()) << "sigma = 0 must not consume randomness";
  // Some rows were actually clipped (negatives and norms), so Pi was applied.
  EXPECT_GE(m.minCoeff(), 0.0);
  EXPECT_NE(m, Matrix(m0 - (lr / normalizer) * g));
}

TEST(NoisyGradientStepTest, NoiseStdIsSigmaTimesLrOverNormalizer) {
  // Zero gradient, entries far from 0 and a large R so Pi changes nothing:
  // M_after - M_before = -lr/normalizer * N(0, sigma^2) on each entry.
  const double sigma = 3.0, lr = 0.01, normalizer = 2.0;
  const double expected_sd = sigma * lr / normalizer;
  Matrix m = Matrix::Constant(1682, 20, 1.0);
  const Matrix g = Matrix::Zero(1682, 20);
  Csprng rng = Csprng::FromSeed(52);
  // R = 25: rows of norm ~4.47 stay inside the ball (sqrt R = 5); a much
  // larger R would coarsen the snapping grid (2^32 ulps of sqrt R) towards
  // the noise.
  const double r = 25.0;
  NoisyGradientStep(m, g, sigma, normalizer, lr, r, rng);
  const double grid = dp::SnapGranularity(expected_sd, std::sqrt(r));
  const Eigen::ArrayXd d = (m.array() - 1.0).reshaped();
  const double n = static_cast<double>(d.size());
  const double mean = d.mean();
  const double sd = std::sqrt((d - mean).square().sum() / (n - 1));
  EXPECT_NEAR(mean, 0.0, 5 * expected_sd / std::sqrt(n));
  // Relative sd of a sample sd over 33640 entries: 1/sqrt(2n) = 0.39%.
  EXPECT_NEAR(sd / expected_sd, 1.0, 0.02);
  // Every entry was perturbed (noise on every entry, not just touched rows),
  // except where the noise fell in [0, grid) and snapping took the entry
  // back to 1.0: P ~ grid * phi(0) / sd per entry, a handful in 33640.
  const double expect_zero = n * grid * 0.3989 / expected_sd;
  EXPECT_LE(static_cast<double>((d == 0.0).count()), 3 * expect_zero + 5) << expect_zero;
  // ~68% of |noise| within one sd.
  const double within = static_cast<double>((d.abs() < expected_sd).count()) / n;
  EXPECT_NEAR(within, 0.6827, 0.015);
}

TEST(NoisyGradientStepTest, ResultIsFeasibleAndSeedDeterministic) {
  Csprng data_rng = Csprng::FromSeed(53);
  const Matrix m0 = UniformMatrix(100, 20, 0.0, 0.8, data_rng);
  const Matrix g = UniformMatrix(100, 20, -5.0, 5.0, data_rng);
  Matrix a = m0, b = m0;
  Csprng ra = Csprng::FromSeed(54);
  Csprng rb = Csprng::FromSeed(54);
  NoisyGradientStep(a, g, 40.0, 3.0, 0.1, 5.0, ra);
  NoisyGradientStep(b, g, 40.0, 3.0, 0.1, 5.0, rb);
  EXPECT_EQ(a, b);
  EXPECT_GE(a.minCoeff(), 0.0);
  EXPECT_LE(a.rowwise().norm().maxCoeff(), std::sqrt(5.0) + 1e-12);
}

// Issue #14 finding 6: every released entry is a multiple of the snapping
// grid, the grid is far below the noise and far above the doubles'
// resolution, and snapping happens after Pi without leaving the feasible set.
TEST(NoisyGradientStepTest, ReleasedValuesLieOnTheSnappingGrid) {
  Csprng data_rng = Csprng::FromSeed(55);
  const Matrix m0 = UniformMatrix(200, 20, 0.0, 0.8, data_rng);
  const Matrix g = UniformMatrix(200, 20, -5.0, 5.0, data_rng);
  const double sigma = 40.0, normalizer = 3.0, lr = 0.1, r = 5.0;
  const double noise_sd = sigma * lr / normalizer;
  const double grid = dp::SnapGranularity(noise_sd, std::sqrt(r));
  // The resolution floor decides here: 2^(floor(log2 sqrt 5) - 52 + 32).
  EXPECT_EQ(grid, std::ldexp(1.0, -19));
  EXPECT_LE(grid, noise_sd * std::ldexp(1.0, -18));
  EXPECT_GE(grid, std::ldexp(std::nextafter(std::sqrt(r), 10.0) - std::sqrt(r), 32));
  Matrix m = m0;
  Csprng rng = Csprng::FromSeed(56);
  NoisyGradientStep(m, g, sigma, normalizer, lr, r, rng);
  int64_t positive = 0;
  for (int64_t k = 0; k < m.size(); ++k) {
    const double x = m.data()[k];
    ASSERT_EQ(std::fmod(x, grid), 0.0) << "entry " << k << " = " << x;
    positive += x > 0 ? 1 : 0;
  }
  EXPECT_GT(positive, m.size() / 4);  // not trivially all zero
  EXPECT_GE(m.minCoeff(), 0.0);
  EXPECT_LE(m.rowwise().norm().maxCoeff(), std::sqrt(r) + 1e-12);
  // Every grid point up to sqrt(R) is a float32 value, so the float32 wire
  // carries the release exactly (docs/privacy.md, wire).
  EXPECT_TRUE(RoundedToFloat32(m) == m);

  // The same step without snapping (re-done by hand from the same noise)
  // differs from the released one by less than one grid step per entry.
  Matrix unsnapped = m0;
  Csprng same = Csprng::FromSeed(56);
  Matrix noise(m0.rows(), m0.cols());
  for (int64_t off = 0; off < noise.size(); off += 1024) {  // NoisyGradientStep's chunks
    dp::FillGaussian(same, sigma, noise.data() + off,
                     static_cast<size_t>(std::min<int64_t>(1024, noise.size() - off)));
  }
  unsnapped -= (lr / normalizer) * (g + noise);
  ClipEmbeddings(unsnapped, r);
  EXPECT_LT((m - unsnapped).cwiseAbs().maxCoeff(), grid);
  EXPECT_GT((m - unsnapped).cwiseAbs().maxCoeff(), 0.0);
}

TEST(SnappingTest, GridIsAPowerOfTwoBetweenTheFloorsAndSnapsTowardZero) {
  // Noise decides: sd 1000 -> 2^(floor(log2 1000) - 20) = 2^-11.
  EXPECT_EQ(dp::SnapGranularity(1000.0, std::sqrt(5.0)), std::ldexp(1.0, -11));
  // Resolution decides: sd 1e-12 next to values up to 2^10 -> 2^(10 - 52 + 32).
  EXPECT_EQ(dp::SnapGranularity(1e-12, 1024.0), std::ldexp(1.0, -10));
  EXPECT_EQ(dp::SnapGranularity(0.1, std::sqrt(5.0)), std::ldexp(1.0, -19));
  const double grid = std::ldexp(1.0, -10);
  EXPECT_EQ(dp::SnapTowardZero(1.0 + 1.5 * grid, grid), 1.0 + grid);
  EXPECT_EQ(dp::SnapTowardZero(-(1.0 + 1.5 * grid), grid), -(1.0 + grid));
  EXPECT_EQ(dp::SnapTowardZero(0.3 * grid, grid), 0.0);
  EXPECT_EQ(dp::SnapTowardZero(7 * grid, grid), 7 * grid);
  EXPECT_DEATH(dp::SnapGranularity(0.0, 1.0), "noise_sd");
  EXPECT_DEATH(dp::SnapGranularity(1.0, INFINITY), "magnitude_bound");
}

// Releases without a public magnitude bound (the size release, coupling's
// sums) snap to their own binade's grid: 21 significant bits at most, never
// finer than the noise's grid, toward zero, in the same binade, idempotent —
// one fixed set of possible outputs whatever the value.
TEST(SnappingTest, BinadeSnapKeepsTwentyFractionBitsTowardZero) {
  const double sd = 18.1;  // noise grid 2^(4 - 20)
  random::Csprng rng = random::Csprng::FromSeed(3);
  for (int k = 0; k < 20000; ++k) {
    const double x = std::ldexp(rng.NextDouble() - 0.5, static_cast<int>(rng.UniformInt(80)) - 30);
    const double y = dp::SnapInBinadeTowardZero(x, sd);
    ASSERT_LE(std::fabs(y), std::fabs(x)) << x;
    ASSERT_TRUE(y == 0 || std::signbit(y) == std::signbit(x)) << x;
    ASSERT_EQ(dp::SnapInBinadeTowardZero(y, sd), y) << x;  // a grid point stays
    if (y == 0) {
      ASSERT_LT(std::fabs(x), std::ldexp(1.0, 4 - 20)) << x;  // below the noise's grid
      continue;
    }
    int ex = 0, ey = 0;
    std::frexp(x, &ex);
    std::frexp(y, &ey);
    ASSERT_EQ(ey, ex) << x;  // the same binade
    const double cell = std::max(std::ldexp(1.0, ey - 1 - 20), std::ldexp(1.0, 4 - 20));
    ASSERT_EQ(std::fmod(y, cell), 0.0) << x;
    ASSERT_LT(std::fabs(x - y), cell) << x;
    ASSERT_EQ(y, static_cast<double>(static_cast<float>(y))) << x;  // float32 holds it
  }
  EXPECT_EQ(dp::SnapInBinadeTowardZero(0.0, sd), 0.0);
  // 1000 + 2^-11 + a little: binade 2^9, cell 2^-11.
  EXPECT_EQ(dp::SnapInBinadeTowardZero(1000 + std::ldexp(1.5, -11), sd),
            1000 + std::ldexp(1.0, -11));
}

// The vector snap multiplies by the reciprocal of a power-of-two grid and
// truncates without libm; it must give std::trunc(x / g) * g to the bit,
// signed zeros included, on every grid.
TEST(SnappingTest, VectorSnapEqualsTruncOfTheQuotientToTheBit) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1e-300,
                                -1e-300,
                                4.9e-324,
                                -4.9e-324,
                                0.49,
                                -0.49,
                                std::ldexp(1.0, 52) + 1,
                                -std::ldexp(1.0, 52) - 3,
                                std::ldexp(1.0, 60) + std::ldexp(1.0, 9),
                                -1e300,
                                INFINITY,
                                -INFINITY,
                                NAN};
  Csprng rng = Csprng::FromSeed(7);
  for (int scale = -30; scale <= 30; scale += 3) {
    for (int k = 0; k < 200; ++k) values.push_back(std::ldexp(dp::SampleGaussian(rng, 1.0), scale));
  }
  for (const double grid : {std::ldexp(1.0, -11), std::ldexp(1.0, -19), std::ldexp(1.0, 10), 3.0,
                            0.1, std::ldexp(1.0, -1030), std::ldexp(1.0, 1023)}) {
    std::vector<double> snapped = values;
    dp::SnapTowardZero(snapped.data(), snapped.size(), grid);
    for (size_t k = 0; k < values.size(); ++k) {
      const double expected = std::trunc(values[k] / grid) * grid;
      const double one = dp::SnapTowardZero(values[k], grid);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(snapped[k]) && std::isnan(one)) << values[k] << " on " << grid;
        continue;
      }
      EXPECT_EQ(std::bit_cast<uint64_t>(snapped[k]), std::bit_cast<uint64_t>(expected))
          << values[k] << " on " << grid << ": " << snapped[k] << " vs " << expected;
      EXPECT_EQ(std::bit_cast<uint64_t>(one), std::bit_cast<uint64_t>(expected))
          << values[k] << " on " << grid;
    }
  }
}

// A straightforward reference SgdEpoch: the same shuffle (iota + std::shuffle
// with the same Csprng stream) and the update rule written out entry by entry.
double ReferenceEpoch(const std::vector<Rating>& ratings, Matrix& u, Matrix& v, const SgdOptions& o,
                      Csprng& rng) {
  std::vector<uint32_t> order(ratings.size());
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  double sum = 0;
  for (const uint32_t k : order) {
    const Rating& r = ratings[k];
    const double e = r.value - u.row(r.user).dot(v.row(r.item));
    sum += e * e;
    const Eigen::RowVectorXd u_old = u.row(r.user);
    const Eigen::RowVectorXd v_old = v.row(r.item);
    if (o.update_u) u.row(r.user) = u_old + o.learning_rate * (2 * e * v_old - o.l2 * u_old);
    if (o.update_v) v.row(r.item) = v_old + o.learning_rate * (2 * e * u_old - o.l2 * v_old);
    if (o.rating_max > 0) {
      if (o.update_u) ClipRow(u.row(r.user).data(), static_cast<int32_t>(u.cols()), o.rating_max);
      if (o.update_v) ClipRow(v.row(r.item).data(), static_cast<int32_t>(v.cols()), o.rating_max);
    }
  }
  return sum / ratings.size();
}

class SgdDimTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(SgdDimTest, MatchesTheReferenceUpdateRule) {
  const int32_t dim = GetParam();
  Csprng data_rng = Csprng::FromSeed(60 + dim);
  const auto ratings = LowRankRatings(30, 25, 3, 0.3, data_rng);
  const Matrix u0 = RandomEmbeddings(30, dim, InitScaleFor(3, dim), 5.0, data_rng);
  const Matrix v0 = RandomEmbeddings(25, dim, InitScaleFor(3, dim), 5.0, data_rng);
  for (int variant = 0; variant < 4; ++variant) {
    SgdOptions o;
    o.learning_rate = 0.05;
    o.l2 = variant == 1 ? 0.1 : 0.0;
    o.update_u = variant != 2;
    o.update_v = variant != 3;
    o.rating_max = variant == 1 ? 0.0 : 5.0;  // variant 1: no clipping
    Matrix u = u0, v = v0, ur = u0, vr = v0;
    Csprng rng = Csprng::FromSeed(61);
    Csprng ref_rng = Csprng::FromSeed(61);
    const double mse = SgdEpoch(ratings, u, v, o, rng);
    const double ref_mse = ReferenceEpoch(ratings, ur, vr, o, ref_rng);
    EXPECT_NEAR(mse, ref_mse, 1e-10) << "variant " << variant;
    EXPECT_LE((u - ur).cwiseAbs().maxCoeff(), 1e-10) << "variant " << variant;
    EXPECT_LE((v - vr).cwiseAbs().maxCoeff(), 1e-10) << "variant " << variant;
    if (!o.update_u) {
      EXPECT_EQ(u, u0);
    }
    if (!o.update_v) {
      EXPECT_EQ(v, v0);
    }
  }
}

TEST_P(SgdDimTest, ReducesTrainingLossAndKeepsInvariants) {
  const int32_t dim = GetParam();
  Csprng rng = Csprng::FromSeed(80 + dim);
  const auto ratings = LowRankRatings(120, 100, 3, 0.25, rng);
  Matrix u = RandomEmbeddings(120, dim, InitScaleFor(3, dim), 5.0, rng);
  Matrix v = RandomEmbeddings(100, dim, InitScaleFor(3, dim), 5.0, rng);
  SgdOptions o;
  o.learning_rate = 0.02;
  const double first = SgdEpoch(ratings, u, v, o, rng);
  double last = first;
  for (int epoch = 0; epoch < 40; ++epoch) last = SgdEpoch(ratings, u, v, o, rng);
  EXPECT_LT(last, 0.25 * first) << "first " << first << " last " << last;
  EXPECT_GE(u.minCoeff(), 0.0);
  EXPECT_GE(v.minCoeff(), 0.0);
  EXPECT_LE(u.rowwise().norm().maxCoeff(), std::sqrt(5.0) + 1e-12);
  EXPECT_LE(v.rowwise().norm().maxCoeff(), std::sqrt(5.0) + 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Dims, SgdDimTest, ::testing::Values(10, 20, 50, 7));

// The blocked parallel epoch (SgdOptions::threads > 1).
class BlockedSgdTest : public ::testing::Test {
 protected:
  // 300 x 200 at density 0.8: ~48,000 ratings, enough for 2 threads.
  BlockedSgdTest() {
    Csprng rng = Csprng::FromSeed(90);
    ratings_ = LowRankRatings(300, 200, 3, 0.8, rng);
    u0_ = RandomEmbeddings(300, 20, InitScaleFor(3, 20), 5.0, rng);
    v0_ = RandomEmbeddings(200, 20, InitScaleFor(3, 20), 5.0, rng);
  }
  // `epochs` epochs from (u0, v0) under seed 91; returns the last MSE.
  double Train(int32_t threads, int epochs, Matrix& u, Matrix& v, bool update_v = true) const {
    SgdOptions o;
    o.learning_rate = 0.02;
    o.threads = threads;
    o.update_v = update_v;
    u = u0_;
    v = v0_;
    Csprng rng = Csprng::FromSeed(91);
    double mse = 0;
    for (int e = 0; e < epochs; ++e) mse = SgdEpoch(ratings_, u, v, o, rng);
    return mse;
  }
  std::vector<data::Rating> ratings_;
  Matrix u0_, v0_;
};

TEST_F(BlockedSgdTest, EnoughRatingsForTwoThreads) {
  ASSERT_GE(static_cast<int64_t>(ratings_.size()), 2 * kMinRatingsPerThread);
}

// The threads write disjoint rows and are joined between sub-epochs, so the
// result depends on the seed and P only: repeated runs agree bit for bit.
TEST_F(BlockedSgdTest, DeterministicForAGivenThreadCount) {
  Matrix u1, v1;
  const double mse1 = Train(2, 3, u1, v1);
  for (int run = 0; run < 3; ++run) {
    Matrix u2, v2;
    EXPECT_EQ(Train(2, 3, u2, v2), mse1);
    EXPECT_TRUE(u2 == u1) << "run " << run;
    EXPECT_TRUE(v2 == v1) << "run " << run;
  }
}

// A different schedule from the one-thread order, training as well.
TEST_F(BlockedSgdTest, TrainsAsWellAsOneThread) {
  Matrix u1, v1, u2, v2;
  const double first = Train(1, 1, u1, v1);
  const double one = Train(1, 15, u1, v1);
  const double two = Train(2, 15, u2, v2);
  EXPECT_FALSE(u1 == u2);  // the blocked path was taken
  EXPECT_LT(two, 0.5 * first) << "first " << first << " blocked " << two;
  EXPECT_NEAR(two, one, 0.1 * one) << "one thread " << one << " blocked " << two;
  EXPECT_GE(u2.minCoeff(), 0.0);
  EXPECT_GE(v2.minCoeff(), 0.0);
  EXPECT_LE(u2.rowwise().norm().maxCoeff(), std::sqrt(5.0) + 1e-12);
  EXPECT_LE(v2.rowwise().norm().maxCoeff(), std::sqrt(5.0) + 1e-12);
  // Three threads: 9 blocks, 3 sub-epochs, same guarantees.
  Matrix u3, v3;
  const double three = Train(3, 15, u3, v3);
  EXPECT_NEAR(three, one, 0.1 * one);
}

TEST_F(BlockedSgdTest, RespectsFrozenV) {
  Matrix u, v;
  Train(2, 2, u, v, /*update_v=*/false);
  EXPECT_TRUE(v == v0_);
  EXPECT_FALSE(u == u0_);
}

// Below kMinRatingsPerThread per thread the epoch is the one-thread one.
TEST(SgdEpochTest, SmallEpochsIgnoreThreads) {
  Csprng data_rng = Csprng::FromSeed(92);
  const auto ratings = LowRankRatings(60, 50, 3, 0.5, data_rng);
  ASSERT_LT(static_cast<int64_t>(ratings.size()), 2 * kMinRatingsPerThread);
  const Matrix u0 = RandomEmbeddings(60, 8, InitScaleFor(3, 8), 5.0, data_rng);
  const Matrix v0 = RandomEmbeddings(50, 8, InitScaleFor(3, 8), 5.0, data_rng);
  Matrix u1 = u0, v1 = v0, u2 = u0, v2 = v0;
  SgdOptions o;
  Csprng a = Csprng::FromSeed(93), b = Csprng::FromSeed(93);
  const double m1 = SgdEpoch(ratings, u1, v1, o, a);
  o.threads = 2;
  EXPECT_EQ(SgdEpoch(ratings, u2, v2, o, b), m1);
  EXPECT_TRUE(u1 == u2);
  EXPECT_TRUE(v1 == v2);
}

TEST(SgdEpochTest, SingleRatingByHand) {
  Matrix u(1, 2), v(1, 2);
  u << 1.0, 0.5;
  v << 0.5, 1.0;
  SgdOptions o;
  o.learning_rate = 0.1;
  o.l2 = 0.5;
  o.rating_max = 5.0;
  Csprng rng = Csprng::FromSeed(1);
  // e = 3 - (0.5 + 0.5) = 2.
  const double mse = SgdEpoch({{0, 0, 3.0f}}, u, v, o, rng);
  EXPECT_DOUBLE_EQ(mse, 4.0);
  // u = u + 0.1 (4 v - 0.5 u) = (1 + 0.2 - 0.05, 0.5 + 0.4 - 0.025)
  EXPECT_NEAR(u(0, 0), 1.15, 1e-15);
  EXPECT_NEAR(u(0, 1), 0.875, 1e-15);
  // v uses the OLD u: v + 0.1 (4 u_old - 0.5 v) = (0.5 + 0.4 - 0.025, 1 + 0.2 - 0.05)
  EXPECT_NEAR(v(0, 0), 0.875, 1e-15);
  EXPECT_NEAR(v(0, 1), 1.15, 1e-15);
}

TEST(SgdEpochTest, MseIsTheErrorBeforeEachUpdate) {
  // Disjoint users and items: no rating sees another's update, so the
  // returned MSE is the mean squared error at the starting point.
  Matrix u = Matrix::Constant(3, 4, 0.5);
  Matrix v = Matrix::Constant(3, 4, 0.5);  // <u,v> = 1
  const std::vector<Rating> ratings = {{0, 0, 2.0f}, {1, 1, 4.0f}, {2, 2, 1.0f}};
  Csprng rng = Csprng::FromSeed(2);
  EXPECT_NEAR(SgdEpoch(ratings, u, v, SgdOptions{}, rng), (1.0 + 9.0 + 0.0) / 3.0, 1e-15);
  Csprng rng2 = Csprng::FromSeed(2);
  EXPECT_EQ(SgdEpoch({}, u, v, SgdOptions{}, rng2), 0.0);
}

// Ratings as sortable tuples, to compare two vectors as multisets.
std::vector<std::tuple<int32_t, int32_t, float>> SortedTuples(const std::vector<Rating>& ratings) {
  std::vector<std::tuple<int32_t, int32_t, float>> t;
  for (const Rating& r : ratings) t.emplace_back(r.user, r.item, r.value);
  std::sort(t.begin(), t.end());
  return t;
}

bool SameOrder(const std::vector<Rating>& a, const std::vector<Rating>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) {
           return x.user == y.user && x.item == y.item && x.value == y.value;
         });
}

// The reordering epoch's first epoch is SgdEpoch's to the bit, and its
// ratings come back in that epoch's order: std::shuffle's swaps on them.
TEST(SgdEpochReorderingTest, TheFirstEpochIsSgdEpochsAndLeavesTheRatingsInItsOrder) {
  for (const int32_t dim : {7, 20}) {
    Csprng data_rng = Csprng::FromSeed(300 + dim);
    const std::vector<Rating> ratings = LowRankRatings(60, 50, 3, 0.3, data_rng);
    const Matrix u0 = RandomEmbeddings(60, dim, InitScaleFor(3, dim), 5.0, data_rng);
    const Matrix v0 = RandomEmbeddings(50, dim, InitScaleFor(3, dim), 5.0, data_rng);
    SgdOptions o;
    o.learning_rate = 0.03;
    o.l2 = 0.05;
    Matrix u = u0, v = v0, ur = u0, vr = v0;
    Csprng rng = Csprng::FromSeed(301);
    Csprng ref_rng = Csprng::FromSeed(301);
    std::vector<Rating> reordered = ratings;
    const double mse = SgdEpochReordering(reordered, u, v, o, rng);
    const double ref_mse = SgdEpoch(ratings, ur, vr, o, ref_rng);
    EXPECT_EQ(mse, ref_mse) << "dim " << dim;
    EXPECT_TRUE(u == ur) << "dim " << dim;
    EXPECT_TRUE(v == vr) << "dim " << dim;
    std::vector<Rating> shuffled = ratings;
    Csprng shuffle_rng = Csprng::FromSeed(301);
    std::shuffle(shuffled.begin(), shuffled.end(), shuffle_rng);
    EXPECT_TRUE(SameOrder(reordered, shuffled)) << "dim " << dim;
    EXPECT_FALSE(SameOrder(reordered, ratings)) << "dim " << dim;
    EXPECT_EQ(SortedTuples(reordered), SortedTuples(ratings)) << "dim " << dim;
  }
}

// Each later epoch shuffles from the order the one before left: it is
// SgdEpoch over the ratings in that order, under the same stream.
TEST(SgdEpochReorderingTest, ALaterEpochIsSgdEpochOverThePreviousEpochsOrder) {
  Csprng data_rng = Csprng::FromSeed(310);
  const std::vector<Rating> ratings = LowRankRatings(60, 50, 3, 0.3, data_rng);
  const Matrix u0 = RandomEmbeddings(60, 20, InitScaleFor(3, 20), 5.0, data_rng);
  const Matrix v0 = RandomEmbeddings(50, 20, InitScaleFor(3, 20), 5.0, data_rng);
  SgdOptions o;
  o.learning_rate = 0.03;
  Matrix u = u0, v = v0, ur = u0, vr = v0, uo = u0, vo = v0;
  Csprng rng = Csprng::FromSeed(311);
  Csprng ref_rng = Csprng::FromSeed(311);
  Csprng order_rng = Csprng::FromSeed(311);
  std::vector<Rating> reordered = ratings;
  for (int epoch = 0; epoch < 3; ++epoch) {
    const std::vector<Rating> before = reordered;  // this epoch's starting order
    const double mse = SgdEpochReordering(reordered, u, v, o, rng);
    EXPECT_EQ(mse, SgdEpoch(before, ur, vr, o, ref_rng)) << "epoch " << epoch;
    EXPECT_TRUE(u == ur) << "epoch " << epoch;
    EXPECT_TRUE(v == vr) << "epoch " << epoch;
    SgdEpoch(ratings, uo, vo, o, order_rng);  // every epoch from the caller's order
  }
  EXPECT_FALSE(u == uo);  // so later epochs are not SgdEpoch's over `ratings`
}

// With P > 1 threads it is SgdEpoch's blocked epoch, the ratings untouched.
TEST_F(BlockedSgdTest, TheReorderingEpochOnThreadsIsTheBlockedEpoch) {
  SgdOptions o;
  o.learning_rate = 0.02;
  o.threads = 2;
  Matrix u = u0_, v = v0_, ur = u0_, vr = v0_;
  Csprng rng = Csprng::FromSeed(320);
  Csprng ref_rng = Csprng::FromSeed(320);
  std::vector<Rating> mine = ratings_;
  EXPECT_EQ(SgdEpochReordering(mine, u, v, o, rng), SgdEpoch(ratings_, ur, vr, o, ref_rng));
  EXPECT_TRUE(u == ur);
  EXPECT_TRUE(v == vr);
  EXPECT_TRUE(SameOrder(mine, ratings_));
  std::vector<Rating> none;
  EXPECT_EQ(SgdEpochReordering(none, u, v, o, rng), 0.0);
}

TEST(LearningRateScheduleTest, Boundaries) {
  const LearningRateSchedule s(1.0, 0.1, 1000);  // decay over the first 800 steps
  EXPECT_DOUBLE_EQ(s.At(0), 1.0);
  EXPECT_DOUBLE_EQ(s.At(400), 0.55);
  EXPECT_NEAR(s.At(799), 1.0 - 0.9 * 799.0 / 800.0, 1e-15);
  EXPECT_DOUBLE_EQ(s.At(800), 0.1);
  EXPECT_DOUBLE_EQ(s.At(801), 0.1);
  EXPECT_DOUBLE_EQ(s.At(999), 0.1);
  EXPECT_DOUBLE_EQ(s.At(5000), 0.1);
  EXPECT_DOUBLE_EQ(s.At(-3), 1.0);
  double prev = s.At(0);
  for (int64_t t = 1; t < 1000; ++t) {
    EXPECT_LE(s.At(t), prev);
    prev = s.At(t);
  }
}

TEST(LearningRateScheduleTest, FullDecayAndConstant) {
  const LearningRateSchedule full(0.5, 0.2, 10, 1.0);
  EXPECT_DOUBLE_EQ(full.At(0), 0.5);
  EXPECT_DOUBLE_EQ(full.At(5), 0.3);
  EXPECT_NEAR(full.At(9), 0.5 - 0.4 * 0.9, 1e-15);
  const LearningRateSchedule constant(0.3, 1.0, 100);
  for (int64_t t = 0; t < 100; ++t) EXPECT_DOUBLE_EQ(constant.At(t), 0.3);
}

}  // namespace
}  // namespace fedmf::mf

namespace fedmf::mf {
namespace {

TEST(SgdDeathTest, MisuseAborts) {
  Matrix u = Matrix::Constant(2, 3, 0.5);
  Matrix v = Matrix::Constant(2, 3, 0.5);
  random::Csprng rng = random::Csprng::FromSeed(1);
  EXPECT_DEATH(SgdEpoch({{0, 0, 1.0f}}, u, u, SgdOptions{}, rng), "different matrices");
  EXPECT_DEATH(SgdEpoch({{0, 2, 1.0f}}, u, v, SgdOptions{}, rng), "out of range");
  std::vector<Rating> bad = {{0, 2, 1.0f}};
  EXPECT_DEATH(SgdEpochReordering(bad, u, v, SgdOptions{}, rng), "out of range");
  EXPECT_DEATH(SgdEpochReordering(bad, u, u, SgdOptions{}, rng), "different matrices");
  EXPECT_DEATH(NoisyGradientStep(u, v, 1.0, 1.0, 0.1, /*rating_max=*/0.0, rng), "R > 0");
  EXPECT_DEATH(NoisyGradientStep(u, v, 1.0, /*normalizer=*/0.0, 0.1, 5.0, rng), "normalizer");
  EXPECT_DEATH(NoisyGradientStep(u, Matrix::Zero(3, 3), 1.0, 1.0, 0.1, 5.0, rng), "shape");
}

}  // namespace
}  // namespace fedmf::mf
