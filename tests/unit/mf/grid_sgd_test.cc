#include "common/mf/grid_sgd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "common/mf/embeddings.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::mf {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using random::Csprng;

// Ratings of a rank-3 non-negative model on 1..5, `count` random pairs.
std::vector<data::Rating> LowRank(int32_t users, int32_t items, int64_t count, uint64_t seed) {
  Csprng rng = Csprng::FromSeed(seed);
  const Matrix a = RandomEmbeddings(users, 3, 1.3, rng);
  const Matrix b = RandomEmbeddings(items, 3, 1.3, rng);
  std::vector<data::Rating> out;
  for (int64_t k = 0; k < count; ++k) {
    const auto i = static_cast<int32_t>(rng.UniformInt(users));
    const auto j = static_cast<int32_t>(rng.UniformInt(items));
    const double x = std::clamp(1.0 + a.row(i).dot(b.row(j)), 1.0, 5.0);
    out.push_back({i, j, static_cast<float>(x)});
  }
  return out;
}

std::vector<std::tuple<int32_t, int32_t, float>> Sorted(const std::vector<data::Rating>& r) {
  std::vector<std::tuple<int32_t, int32_t, float>> t;
  for (const data::Rating& x : r) t.emplace_back(x.user, x.item, x.value);
  std::sort(t.begin(), t.end());
  return t;
}

struct Fit {
  Matrix u, v;
  std::vector<double> epoch_mse;
  std::vector<data::Rating> ratings;
};

Fit Train(std::vector<data::Rating> ratings, int32_t users, int32_t items, int32_t dim,
          const GridSgdOptions& options, int epochs, uint64_t seed = 7) {
  Csprng rng = Csprng::FromSeed(seed);
  Fit f;
  f.u = Matrix(users, dim);
  f.v = Matrix(items, dim);
  GridSgdStartingModel(ratings, dim, rng, f.u, f.v);
  auto grid = GridSgd::Create(std::move(ratings), f.u, f.v, options, rng);
  EXPECT_THAT(grid, IsOk());
  for (int e = 0; e < epochs; ++e) f.epoch_mse.push_back(grid->RunEpoch(rng));
  grid->CopyModelTo(f.u, f.v);
  f.ratings = std::move(*grid).TakeRatings();
  return f;
}

double Mse(const std::vector<data::Rating>& r, const Matrix& u, const Matrix& v) {
  double s = 0;
  for (const data::Rating& x : r) {
    const double e = x.value - u.row(x.user).dot(v.row(x.item));
    s += e * e;
  }
  return s / static_cast<double>(r.size());
}

TEST(GridSgdTest, RefusesBadOptionsAndRatingsAndKeepsTheRatings) {
  const std::vector<data::Rating> original = LowRank(30, 20, 300, 1);
  const Matrix u = Matrix::Constant(30, 4, 0.5), v = Matrix::Constant(20, 4, 0.5);
  Csprng rng = Csprng::FromSeed(1);
  auto refused = [&](GridSgdOptions o, const Matrix& uu, const Matrix& vv,
                     std::vector<data::Rating> r, const std::string& needle) {
    const std::vector<data::Rating> before = r;
    auto g = GridSgd::Create(std::move(r), uu, vv, o, rng);
    ASSERT_THAT(g, StatusIs(absl::StatusCode::kInvalidArgument)) << needle;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(g.status().message().find(needle), std::string::npos) << g.status().message();
    EXPECT_EQ(r, before) << "a refused Create must leave the ratings where they were";
  };
  GridSgdOptions o;
  o.learning_rate = 0;
  refused(o, u, v, original, "learning_rate");
  o = {};
  o.learning_rate = std::numeric_limits<double>::quiet_NaN();
  refused(o, u, v, original, "learning_rate");
  o = {};
  o.l2 = -0.1;
  refused(o, u, v, original, "l2");
  o = {};
  o.rating_max = std::numeric_limits<double>::infinity();
  refused(o, u, v, original, "rating_max");
  o = {};
  o.grid = 0;
  refused(o, u, v, original, "grid");
  o.grid = 257;
  refused(o, u, v, original, "grid");
  o = {};
  o.threads = 0;
  refused(o, u, v, original, "threads");
  refused({}, u, Matrix::Constant(20, 5, 0.5), original, "same width");
  std::vector<data::Rating> bad = original;
  bad[17].item = 20;
  refused({}, u, v, bad, "rating 17 (user");
  bad = original;
  bad[3].user = -1;
  refused({}, u, v, bad, "rating 3 (user -1");
}

TEST(GridSgdTest, GivesBackEveryRatingWithTheCallersIds) {
  const std::vector<data::Rating> original = LowRank(57, 31, 2000, 2);
  GridSgdOptions o;
  o.grid = 5;
  const Fit f = Train(original, 57, 31, 6, o, 2);
  EXPECT_EQ(f.ratings.size(), original.size());
  EXPECT_EQ(Sorted(f.ratings), Sorted(original));
  EXPECT_NE(f.ratings, original) << "the engine keeps its block order (a real rearrangement)";
  // Block order groups a user's ratings inside each block: one run of
  // consecutive ratings per block column it has ratings in, so <= G runs.
  std::vector<int> runs(57, 0);
  for (size_t k = 0; k < f.ratings.size(); ++k) {
    if (k == 0 || f.ratings[k].user != f.ratings[k - 1].user) ++runs[f.ratings[k].user];
  }
  EXPECT_LE(*std::max_element(runs.begin(), runs.end()), 5);
}

// One update by hand: two ratings on disjoint rows (so their order does not
// matter), values f and 3f (standard deviation f, so s = f), one epoch
// without warm-up, lambda 0.1, eta 0.2. In scaled units every coordinate
// moves by eta / sqrt(G = 1) * (lambda / s * p' - e' q'); back in the
// ratings' units that is (eta / s) * (lambda p - e q) at the rows from
// before the update. The model comes back at the caller's rows.
TEST(GridSgdTest, OneEpochIsTheAdaptiveStepAtTheCallersRows) {
  for (const double f : {1.0, 2.0}) {
    const std::vector<data::Rating> r = {{2, 0, static_cast<float>(f)},
                                         {0, 1, static_cast<float>(3 * f)}};
    ASSERT_DOUBLE_EQ(GridSgdRatingScale(r), f);
    Matrix u(3, 5), v(2, 5);
    for (int j = 0; j < 5; ++j) {
      u(0, j) = 0.1 * (j + 1);
      u(1, j) = 9.0;  // no rating: never moves
      u(2, j) = 0.3 - 0.05 * j;
      v(0, j) = 0.2 + 0.01 * j;
      v(1, j) = 0.4 - 0.02 * j;
    }
    GridSgdOptions o;
    o.learning_rate = 0.2;
    o.l2 = 0.1;
    o.rating_max = 0;
    o.warm_up = false;
    o.grid = 2;
    Csprng rng = Csprng::FromSeed(3);
    ASSERT_OK_AND_ASSIGN(auto grid, GridSgd::Create(std::vector<data::Rating>(r), u, v, o, rng));
    const double mse = grid.RunEpoch(rng);
    Matrix u1, v1;
    grid.CopyModelTo(u1, v1);
    ASSERT_EQ(u1.rows(), 3);
    ASSERT_EQ(v1.cols(), 5);
    const double step = 0.2 / f;
    double sum_sq = 0;
    for (const auto& [user, item, value] : {std::tuple{2, 0, f}, std::tuple{0, 1, 3 * f}}) {
      const double e = value - u.row(user).dot(v.row(item));
      sum_sq += e * e;
      for (int j = 0; j < 5; ++j) {
        EXPECT_NEAR(u1(user, j), u(user, j) - step * (0.1 * u(user, j) - e * v(item, j)), 1e-6);
        EXPECT_NEAR(v1(item, j), v(item, j) - step * (0.1 * v(item, j) - e * u(user, j)), 1e-6);
      }
    }
    EXPECT_NEAR(mse, sum_sq / 2, 1e-5 * f * f);
    for (int j = 0; j < 5; ++j) EXPECT_NEAR(u1(1, j), 9.0, 1e-6);
  }
}

TEST(GridSgdTest, ResultDoesNotDependOnTheThreadCount) {
  const std::vector<data::Rating> r = LowRank(300, 200, 40000, 4);
  GridSgdOptions o;
  o.grid = 6;
  const Fit one = Train(r, 300, 200, 8, o, 3);
  o.threads = 2;
  const Fit two = Train(r, 300, 200, 8, o, 3);
  o.threads = 4;
  const Fit four = Train(r, 300, 200, 8, o, 3);
  EXPECT_EQ(one.u, two.u);
  EXPECT_EQ(one.v, two.v);
  EXPECT_EQ(one.u, four.u);
  EXPECT_EQ(one.epoch_mse, four.epoch_mse);
  EXPECT_EQ(one.ratings, four.ratings);
  o.grid = 5;  // G is part of the algorithm
  const Fit other = Train(r, 300, 200, 8, o, 3);
  EXPECT_NE(one.u, other.u);
}

// Blocks of very different sizes (a few users and items hold most ratings),
// so with one thread per block a diagonal's small blocks finish long before
// its large one and the next diagonal's blocks start around it: each must
// still wait for the two blocks before it on its rows, or the result moves.
TEST(GridSgdTest, UnevenBlocksGiveTheOneThreadResultOnEveryThreadCount) {
  Csprng rng = Csprng::FromSeed(11);
  std::vector<data::Rating> r;
  for (int k = 0; k < 60000; ++k) {
    const double a = rng.NextDouble(), b = rng.NextDouble();
    const auto i = static_cast<int32_t>(300 * a * a * a * a);
    const auto j = static_cast<int32_t>(200 * b * b * b * b);
    r.push_back({i, j, static_cast<float>(1 + (i + 2 * j) % 5)});
  }
  GridSgdOptions o;
  const Fit one = Train(r, 300, 200, 8, o, 4);
  for (const int32_t threads : {2, 3, 8, 8, 8}) {
    o.threads = threads;
    const Fit many = Train(r, 300, 200, 8, o, 4);
    EXPECT_EQ(one.u, many.u) << threads << " threads";
    EXPECT_EQ(one.v, many.v) << threads << " threads";
    EXPECT_EQ(one.epoch_mse, many.epoch_mse) << threads << " threads";
  }
}

TEST(GridSgdTest, FitsALowRankMatrix) {
  const std::vector<data::Rating> r = LowRank(300, 200, 30000, 5);
  double mean = 0, var = 0;
  for (const data::Rating& x : r) mean += x.value;
  mean /= static_cast<double>(r.size());
  for (const data::Rating& x : r) var += (x.value - mean) * (x.value - mean);
  var /= static_cast<double>(r.size());
  GridSgdOptions o;
  o.rating_max = 0;
  const Fit f = Train(r, 300, 200, 8, o, 20);
  // From the small start (<u, v> about s / 4) to a fit that levels off where
  // lambda = 0.05 holds the rows back.
  EXPECT_GT(f.epoch_mse[0], 0.5 * var);
  EXPECT_LT(f.epoch_mse.back(), 0.05 * var);
  EXPECT_LT(Mse(r, f.u, f.v), 0.05 * var);
  EXPECT_NEAR(Mse(r, f.u, f.v), f.epoch_mse.back(), 0.5 * f.epoch_mse.back());
}

TEST(GridSgdTest, ProjectionKeepsEveryRowInPi) {
  const std::vector<data::Rating> r = LowRank(100, 80, 6000, 6);
  GridSgdOptions o;
  o.rating_max = 2.0;  // tighter than the data needs: the ball binds
  o.learning_rate = 0.3;
  const Fit f = Train(r, 100, 80, 6, o, 5);
  int on_sphere = 0;
  for (const Matrix* m : {&f.u, &f.v}) {
    for (Eigen::Index i = 0; i < m->rows(); ++i) {
      EXPECT_GE(m->row(i).minCoeff(), 0.0);
      EXPECT_LE(m->row(i).squaredNorm(), 2.0 * (1 + 1e-5));
      on_sphere += m->row(i).squaredNorm() > 2.0 * (1 - 1e-4);
    }
  }
  EXPECT_GT(on_sphere, 20);
  o.rating_max = 0;  // unconstrained: some coordinates go negative
  const Fit free = Train(r, 100, 80, 6, o, 5);
  EXPECT_LT(std::min(free.u.minCoeff(), free.v.minCoeff()), 0.0);
}

TEST(GridSgdTest, WarmUpEpochMovesOnlyTheFirstFourCoordinates) {
  const std::vector<data::Rating> r = LowRank(60, 40, 2000, 7);
  for (const bool warm : {true, false}) {
    Csprng rng = Csprng::FromSeed(8);
    Matrix u(60, 7), v(40, 7);
    GridSgdStartingModel(r, 7, rng, u, v);
    GridSgdOptions o;
    o.warm_up = warm;
    ASSERT_OK_AND_ASSIGN(auto grid, GridSgd::Create(std::vector<data::Rating>(r), u, v, o, rng));
    grid.RunEpoch(rng);
    Matrix u1, v1;
    grid.CopyModelTo(u1, v1);
    const double head_moved = (u1.leftCols(4) - u.leftCols(4)).norm();
    const double tail_moved = (u1.rightCols(3) - u.rightCols(3)).norm();
    EXPECT_GT(head_moved, 0.1);
    if (warm) {
      EXPECT_LT(tail_moved, 1e-5) << "float32 round trip only";
      grid.RunEpoch(rng);  // the tail joins from the second epoch
      grid.CopyModelTo(u1, v1);
      EXPECT_GT((u1.rightCols(3) - u.rightCols(3)).norm(), 0.1);
    } else {
      EXPECT_GT(tail_moved, 0.1);
    }
  }
}

// Scaled units: without the ridge (whose lambda is in the ratings' units, so
// a 10x scale is another objective), ratings ten times larger (and a start
// ten times larger in <u, v>) give predictions ten times larger: eta means
// the same step on every scale.
TEST(GridSgdTest, TheRatingScaleDoesNotChangeTheFit) {
  const std::vector<data::Rating> r = LowRank(80, 60, 5000, 9);
  std::vector<data::Rating> big = r;
  for (data::Rating& x : big) x.value *= 10.0f;
  EXPECT_NEAR(GridSgdRatingScale(big), 10 * GridSgdRatingScale(r), 1e-6 * GridSgdRatingScale(big));
  GridSgdOptions o;
  o.rating_max = 0;
  o.l2 = 0;
  const Fit small_fit = Train(r, 80, 60, 6, o, 4, 11);
  const Fit big_fit = Train(big, 80, 60, 6, o, 4, 11);
  for (int i = 0; i < 80; i += 7) {
    for (int j = 0; j < 60; j += 5) {
      const double a = small_fit.u.row(i).dot(small_fit.v.row(j));
      EXPECT_NEAR(big_fit.u.row(i).dot(big_fit.v.row(j)), 10 * a, 1e-3 * (1 + 10 * std::abs(a)));
    }
  }
  EXPECT_NEAR(big_fit.epoch_mse.back(), 100 * small_fit.epoch_mse.back(),
              1e-3 * big_fit.epoch_mse.back());
}

TEST(GridSgdTest, EmptyRatingsAndConstantRatings) {
  GridSgdOptions o;
  Csprng rng = Csprng::FromSeed(12);
  const Matrix u = Matrix::Constant(4, 3, 0.1), v = Matrix::Constant(5, 3, 0.1);
  ASSERT_OK_AND_ASSIGN(auto empty, GridSgd::Create({}, u, v, o, rng));
  EXPECT_EQ(empty.RunEpoch(rng), 0.0);
  EXPECT_DOUBLE_EQ(GridSgdRatingScale({}), 1.0);
  // All ratings 4: s is a quarter of their root mean square (their
  // standard deviation, 0, would blow every step up), and the fit reaches them.
  std::vector<data::Rating> four;
  for (int32_t i = 0; i < 4; ++i) {
    for (int32_t j = 0; j < 5; ++j) four.push_back({i, j, 4.0f});
  }
  EXPECT_DOUBLE_EQ(GridSgdRatingScale(four), 1.0);
  o.rating_max = 0;
  o.l2 = 0;
  const Fit f = Train(four, 4, 5, 3, o, 30);
  EXPECT_LT(Mse(four, f.u, f.v), 1e-3);
}

}  // namespace
}  // namespace fedmf::mf
