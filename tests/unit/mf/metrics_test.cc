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
