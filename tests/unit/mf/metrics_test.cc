#include "common/mf/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fedmf::mf {
namespace {

using data::Rating;
using data::RatingRange;

TEST(MetricsTest, PredictClampsToTheRange) {
  Matrix u(1, 2), v(3, 2);
  u << 1, 2;
  v << 1, 1,  // 3
      2, 2,   // 6 -> 5
      0, 0;   // 0 -> 1
  const RatingRange range{1.0, 5.0};
  EXPECT_DOUBLE_EQ(Predict(u, v, 0, 0, range), 3.0);
  EXPECT_DOUBLE_EQ(Predict(u, v, 0, 1, range), 5.0);
  EXPECT_DOUBLE_EQ(Predict(u, v, 0, 2, range), 1.0);
}

TEST(MetricsTest, EvaluateHandComputed) {
  Matrix u(1, 2), v(3, 2);
  u << 1, 2;
  v << 1, 1, 2, 2, 0, 0;  // predictions 3, 5, 1
  const std::vector<Rating> ratings = {{0, 0, 2.0f}, {0, 1, 4.0f}, {0, 2, 1.5f}};
  // errors -1, -1, 0.5
  const ErrorMetrics m = Evaluate(ratings, u, v, RatingRange{1.0, 5.0});
  EXPECT_EQ(m.count, 3);
  EXPECT_DOUBLE_EQ(m.mse, 2.25 / 3.0);
  EXPECT_DOUBLE_EQ(m.rmse, std::sqrt(0.75));
  EXPECT_DOUBLE_EQ(m.mae, 2.5 / 3.0);
}

// 2.5 blocks of ratings with errors that do not sum exactly in floating
// point: the result is the blocks' sums added in order, on any thread count,
// and one block's result is the plain sequential sum.
TEST(MetricsTest, EvaluateSumsFixedBlocksInOrderOnAnyThreadCount) {
  const size_t n = kEvaluateBlock * 5 / 2;
  std::vector<Rating> ratings(n);
  for (size_t i = 0; i < n; ++i) {
    ratings[i] = {0, static_cast<int32_t>(i % 7), static_cast<float>(1.0 + 0.37 * (i % 11))};
  }
  const auto predict = [](const Rating& r) { return 1.1 + 0.53 * r.item; };
  double block_sq[3] = {0, 0, 0};
  double block_abs[3] = {0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    const double err = static_cast<double>(ratings[i].value) - predict(ratings[i]);
    block_sq[i / kEvaluateBlock] += err * err;
    block_abs[i / kEvaluateBlock] += std::abs(err);
  }
  const double want_mse = (block_sq[0] + block_sq[1] + block_sq[2]) / static_cast<double>(n);
  const double want_mae = (block_abs[0] + block_abs[1] + block_abs[2]) / static_cast<double>(n);
  for (int threads : {1, 2, 3, 8}) {
    const ErrorMetrics m = EvaluateWith(ratings, predict, threads);
    EXPECT_EQ(m.count, static_cast<int64_t>(n));
    EXPECT_EQ(m.mse, want_mse) << threads << " threads";  // to the bit
    EXPECT_EQ(m.mae, want_mae) << threads << " threads";
  }
  const std::vector<Rating> one_block(ratings.begin(), ratings.begin() + kEvaluateBlock);
  double sequential = 0;
  for (const Rating& r : one_block) {
    const double err = static_cast<double>(r.value) - predict(r);
    sequential += err * err;
  }
  EXPECT_EQ(EvaluateWith(one_block, predict, 2).mse,
            sequential / static_cast<double>(kEvaluateBlock));
}

TEST(MetricsTest, EvaluateEmpty) {
  const ErrorMetrics m = Evaluate({}, Matrix(0, 2), Matrix(0, 2), RatingRange{});
  EXPECT_EQ(m.count, 0);
  EXPECT_EQ(m.mse, 0.0);
  EXPECT_EQ(m.rmse, 0.0);
  EXPECT_EQ(m.mae, 0.0);
}

TEST(MetricsTest, CombineWeightsByCount) {
  ErrorMetrics a{1.0, 1.0, 1.0, 1};
  ErrorMetrics b{4.0, 2.0, 2.0, 3};
  ErrorMetrics empty{};
  const ErrorMetrics c = Combine({a, empty, b});
  EXPECT_EQ(c.count, 4);
  EXPECT_DOUBLE_EQ(c.mse, 13.0 / 4.0);
  EXPECT_DOUBLE_EQ(c.rmse, std::sqrt(13.0 / 4.0));
  EXPECT_DOUBLE_EQ(c.mae, 7.0 / 4.0);
  const ErrorMetrics none = Combine({});
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.mse, 0.0);
}

TEST(MetricsTest, CombineOfSplitsEqualsWhole) {
  Matrix u(2, 3), v(4, 3);
  u << 0.5, 1.0, 0.2, 1.2, 0.1, 0.7;
  v << 1.0, 0.3, 0.9, 0.2, 1.4, 0.5, 0.8, 0.8, 0.8, 1.1, 0.0, 0.4;
  const std::vector<Rating> all = {
      {0, 0, 3.0f}, {0, 1, 2.0f}, {0, 3, 4.0f}, {1, 0, 5.0f}, {1, 2, 1.0f}};
  const std::vector<Rating> p1(all.begin(), all.begin() + 2);
  const std::vector<Rating> p2(all.begin() + 2, all.end());
  const RatingRange range{1.0, 5.0};
  const ErrorMetrics whole = Evaluate(all, u, v, range);
  const ErrorMetrics combined = Combine({Evaluate(p1, u, v, range), Evaluate(p2, u, v, range)});
  EXPECT_EQ(combined.count, whole.count);
  EXPECT_NEAR(combined.mse, whole.mse, 1e-15);
  EXPECT_NEAR(combined.rmse, whole.rmse, 1e-15);
  EXPECT_NEAR(combined.mae, whole.mae, 1e-15);
}

}  // namespace
}  // namespace fedmf::mf
