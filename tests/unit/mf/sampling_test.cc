#include "common/mf/sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace fedmf::mf {
namespace {

using data::Rating;
using random::Csprng;

// Users with 0..max_row ratings on distinct items.
RatingMatrix VariedRows(int32_t users, int32_t items, int32_t max_row, Csprng& rng) {
  std::vector<Rating> ratings;
  std::vector<int32_t> all(static_cast<size_t>(items));
  for (int32_t j = 0; j < items; ++j) all[j] = j;
  for (int32_t i = 0; i < users; ++i) {
    const int32_t k = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(max_row) + 1));
    std::shuffle(all.begin(), all.end(), rng);
    for (int32_t t = 0; t < k; ++t) {
      ratings.push_back({i, all[t], static_cast<float>(1 + rng.UniformInt(5))});
    }
  }
  return RatingMatrix(users, items, ratings);
}

TEST(RandomTrimTest, BoundSubsetAndSmallRowsUnchanged) {
  Csprng data_rng = Csprng::FromSeed(1);
  const RatingMatrix x = VariedRows(300, 80, 40, data_rng);
  for (const int32_t theta : {1, 5, 17}) {
    Csprng rng = Csprng::FromSeed(2);
    const RatingMatrix t = RandomTrim(x, theta, rng);
    ASSERT_EQ(t.num_users(), x.num_users());
    ASSERT_EQ(t.num_items(), x.num_items());
    EXPECT_LE(t.MaxRowSize(), theta);
    for (int32_t i = 0; i < x.num_users(); ++i) {
      const auto orig = x.Row(i);
      const auto kept = t.Row(i);
      EXPECT_EQ(static_cast<int32_t>(kept.size()), std::min(theta, x.RowSize(i)));
      std::map<int32_t, float> by_item;
      for (const auto& e : orig) by_item[e.item] = e.value;
      std::set<int32_t> seen;
      for (const auto& e : kept) {
        ASSERT_TRUE(by_item.count(e.item)) << "user " << i << " item " << e.item;
        EXPECT_EQ(by_item[e.item], e.value);
        EXPECT_TRUE(seen.insert(e.item).second) << "duplicate";
      }
      if (x.RowSize(i) <= theta) {
        ASSERT_EQ(kept.size(), orig.size());
        for (size_t k = 0; k < kept.size(); ++k) {
          EXPECT_EQ(kept[k].item, orig[k].item);
          EXPECT_EQ(kept[k].value, orig[k].value);
        }
      }
    }
  }
}

TEST(RandomTrimTest, DeterministicUnderASeedAndVariesAcrossSeeds) {
  Csprng data_rng = Csprng::FromSeed(3);
  const RatingMatrix x = VariedRows(200, 60, 30, data_rng);
  Csprng a = Csprng::FromSeed(4);
  Csprng b = Csprng::FromSeed(4);
  Csprng c = Csprng::FromSeed(5);
  const auto ta = RandomTrim(x, 5, a).ToRatings();
  EXPECT_EQ(ta, RandomTrim(x, 5, b).ToRatings());
  EXPECT_NE(ta, RandomTrim(x, 5, c).ToRatings());
}

TEST(RandomTrimTest, SubsetsAreUniform) {
  // One user with 5 ratings trimmed to 2: each of the C(5,2) = 10 subsets
  // should appear with probability 1/10.
  std::vector<Rating> ratings;
  for (int32_t j = 0; j < 5; ++j) ratings.push_back({0, j, 3.0f});
  const RatingMatrix x(1, 5, ratings);
  Csprng rng = Csprng::FromSeed(6);
  constexpr int kTrials = 50000;
  std::map<std::pair<int32_t, int32_t>, int> counts;
  for (int t = 0; t < kTrials; ++t) {
    const RatingMatrix trimmed = RandomTrim(x, 2, rng);
    const auto row = trimmed.Row(0);
    ASSERT_EQ(row.size(), 2u);
    EXPECT_LT(row[0].item, row[1].item);  // original order is kept
    ++counts[{row[0].item, row[1].item}];
  }
  ASSERT_EQ(counts.size(), 10u);
  // Binomial(50000, 0.1): sd = 67; allow 5 sd.
  for (const auto& [subset, n] : counts) EXPECT_NEAR(n, kTrials / 10, 335);
}

TEST(PoissonSampleRowsTest, EdgeCases) {
  Csprng rng = Csprng::FromSeed(7);
  EXPECT_TRUE(PoissonSampleRows(0, 0.5, rng).empty());
  EXPECT_TRUE(PoissonSampleRows(100, 0.0, rng).empty());
  EXPECT_TRUE(PoissonSampleRows(100, -1.0, rng).empty());
  EXPECT_TRUE(PoissonSampleRows(100, std::nan(""), rng).empty());
  const auto all = PoissonSampleRows(50, 1.0, rng);
  ASSERT_EQ(all.size(), 50u);
  for (int32_t i = 0; i < 50; ++i) EXPECT_EQ(all[i], i);
}

// q = 0.01 and 0.05 take the geometric-skip path, 0.3 the per-row path.
class PoissonRateTest : public ::testing::TestWithParam<double> {};

TEST_P(PoissonRateTest, CountHasBinomialMeanAndVariance) {
  const double q = GetParam();
  const int32_t n = 20000;
  constexpr int kTrials = 600;
  Csprng rng = Csprng::FromSeed(8);
  double sum = 0;
  double sum_sq = 0;
  for (int t = 0; t < kTrials; ++t) {
    const auto rows = PoissonSampleRows(n, q, rng);
    ASSERT_TRUE(std::is_sorted(rows.begin(), rows.end()));
    ASSERT_TRUE(std::adjacent_find(rows.begin(), rows.end()) == rows.end());
    if (!rows.empty()) {
      ASSERT_GE(rows.front(), 0);
      ASSERT_LT(rows.back(), n);
    }
    const double k = static_cast<double>(rows.size());
    sum += k;
    sum_sq += k * k;
  }
  const double mean = sum / kTrials;
  const double var = (sum_sq - kTrials * mean * mean) / (kTrials - 1);
  const double binom_var = n * q * (1 - q);
  EXPECT_NEAR(mean, n * q, 5 * std::sqrt(binom_var / kTrials));
  // The sample variance has relative sd ~ sqrt(2/(T-1)) = 5.8%; allow 5 sd.
  EXPECT_NEAR(var / binom_var, 1.0, 0.29);
}

TEST_P(PoissonRateTest, EveryRowHasRateQAndPairsAreIndependent) {
  // Small n so the edges of the skipping (first row, last row) are exercised.
  const double q = GetParam();
  const int32_t n = 8;
  constexpr int kTrials = 200000;
  Csprng rng = Csprng::FromSeed(9);
  std::vector<int> hits(n, 0);
  int both01 = 0;
  int both_first_last = 0;
  for (int t = 0; t < kTrials; ++t) {
    const auto rows = PoissonSampleRows(n, q, rng);
    std::vector<bool> in(n, false);
    for (const int32_t r : rows) in[r] = true;
    for (int32_t r = 0; r < n; ++r) hits[r] += in[r];
    both01 += in[0] && in[1];
    both_first_last += in[0] && in[n - 1];
  }
  const double sd = std::sqrt(q * (1 - q) / kTrials);
  for (int32_t r = 0; r < n; ++r) {
    EXPECT_NEAR(static_cast<double>(hits[r]) / kTrials, q, 5 * sd) << "row " << r;
  }
  const double q2 = q * q;
  const double sd2 = std::sqrt(q2 * (1 - q2) / kTrials);
  EXPECT_NEAR(static_cast<double>(both01) / kTrials, q2, 5 * sd2);
  EXPECT_NEAR(static_cast<double>(both_first_last) / kTrials, q2, 5 * sd2);
}

INSTANTIATE_TEST_SUITE_P(Rates, PoissonRateTest, ::testing::Values(0.01, 0.05, 0.3));

TEST(PoissonSampleRowsTest, DeterministicUnderASeed) {
  Csprng a = Csprng::FromSeed(10);
  Csprng b = Csprng::FromSeed(10);
  EXPECT_EQ(PoissonSampleRows(5000, 0.02, a), PoissonSampleRows(5000, 0.02, b));
}

}  // namespace
}  // namespace fedmf::mf
