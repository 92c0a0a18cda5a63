#include "common/data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "common/data/internal/synthetic_sampling.h"
#include "common/random/csprng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::data {
namespace {

using ::testing::HasSubstr;

SyntheticOptions Small() {
  SyntheticOptions o;
  o.num_users = 80;
  o.num_items = 50;
  o.density = 0.1;
  o.seed = 7;
  return o;
}

void ExpectWellFormed(const Dataset& d, const SyntheticOptions& o) {
  EXPECT_EQ(d.num_users, o.num_users);
  EXPECT_EQ(d.num_items, o.num_items);
  EXPECT_EQ(static_cast<int64_t>(d.ratings.size()),
            std::llround(o.density * o.num_users * o.num_items));
  std::set<std::pair<int32_t, int32_t>> pairs;
  std::vector<int> per_user(o.num_users, 0), per_item(o.num_items, 0);
  for (const Rating& r : d.ratings) {
    ASSERT_GE(r.user, 0);
    ASSERT_LT(r.user, o.num_users);
    ASSERT_GE(r.item, 0);
    ASSERT_LT(r.item, o.num_items);
    EXPECT_TRUE(pairs.emplace(r.user, r.item).second) << "duplicate " << r.user << "," << r.item;
    EXPECT_GE(r.value, o.range.min);
    EXPECT_LE(r.value, o.range.max);
    EXPECT_EQ(r.value, std::round(r.value)) << "ratings are quantized to integers";
    ++per_user[r.user];
    ++per_item[r.item];
  }
  EXPECT_EQ(std::count(per_user.begin(), per_user.end(), 0), 0) << "a user has no rating";
  EXPECT_EQ(std::count(per_item.begin(), per_item.end(), 0), 0) << "an item has no rating";
  EXPECT_EQ(d.user_ids.size(), static_cast<size_t>(o.num_users));
  EXPECT_EQ(d.item_ids.size(), static_cast<size_t>(o.num_items));
}

TEST(DataSyntheticTest, ExactCountCoverageAndRange) {
  const SyntheticOptions o = Small();
  ASSERT_OK_AND_ASSIGN(auto d, GenerateSynthetic(o));
  ExpectWellFormed(d, o);
  EXPECT_EQ(d.range.min, 1.0);
  EXPECT_EQ(d.range.max, 5.0);
  EXPECT_TRUE(std::is_sorted(d.ratings.begin(), d.ratings.end(), [](auto& a, auto& b) {
    return std::pair(a.user, a.item) < std::pair(b.user, b.item);
  }));
}

TEST(DataSyntheticTest, DefaultsAreWellFormed) {
  ASSERT_OK_AND_ASSIGN(auto d, GenerateSynthetic({}));
  ExpectWellFormed(d, SyntheticOptions{});
  EXPECT_EQ(d.ratings.size(), 24000u);
}

TEST(DataSyntheticTest, MinimalDensityStillCoversEveryone) {
  SyntheticOptions o = Small();
  o.density = 80.0 / (80 * 50);  // exactly max(users, items) ratings
  ASSERT_OK_AND_ASSIGN(auto d, GenerateSynthetic(o));
  ExpectWellFormed(d, o);
}

TEST(DataSyntheticTest, DenseAndCompleteMatrices) {
  for (double density : {0.7, 0.97, 1.0}) {
    SyntheticOptions o = Small();
    o.density = density;
    ASSERT_OK_AND_ASSIGN(auto d, GenerateSynthetic(o));
    ExpectWellFormed(d, o);
  }
}

TEST(DataSyntheticTest, DeterministicInSeed) {
  auto a = GenerateSynthetic(Small());
  auto b = GenerateSynthetic(Small());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->ratings, b->ratings);
  SyntheticOptions other = Small();
  other.seed = 8;
  ASSERT_OK_AND_ASSIGN(auto c, GenerateSynthetic(other));
  EXPECT_NE(a->ratings, c.ratings);
}

// The 32-bit pair keys the generator uses where n * m <= 2^32 are the same
// pairs, from the same draws, as the 64-bit ones: sparse (rejection) and
// dense (complement) targets, with the stream left in the same state.
TEST(DataSyntheticTest, ThirtyTwoBitPairsAreTheSamePairs) {
  for (const auto& [n, m, count] : std::vector<std::tuple<int32_t, int32_t, int64_t>>{
           {300, 200, 900}, {300, 200, 45000}, {7, 5, 35}, {1000, 3, 1000}}) {
    random::Csprng a = random::Csprng::FromSeed(11), b = random::Csprng::FromSeed(11);
    const std::vector<uint64_t> wide = internal::SampleCoveringPairs(n, m, count, a);
    const std::vector<uint32_t> narrow = internal::SampleCoveringPairs32(n, m, count, b);
    ASSERT_EQ(wide.size(), static_cast<size_t>(count));
    EXPECT_TRUE(std::equal(wide.begin(), wide.end(), narrow.begin(), narrow.end()))
        << n << " x " << m << ", " << count;
    EXPECT_EQ(a.UniformInt(1u << 30), b.UniformInt(1u << 30));
  }
}

TEST(DataSyntheticTest, CustomRangeIsRespected) {
  SyntheticOptions o = Small();
  o.range = {0.0, 10.0};
  o.noise = 2.0;
  ASSERT_OK_AND_ASSIGN(auto d, GenerateSynthetic(o));
  ExpectWellFormed(d, o);
}

TEST(DataSyntheticTest, TooLowDensityIsAnError) {
  SyntheticOptions o = Small();
  o.density = 0.01;  // 40 ratings for 80 users
  auto d = GenerateSynthetic(o);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("every user and item needs one"));
}

TEST(DataSyntheticTest, InvalidOptionsAreErrors) {
  auto check = [](SyntheticOptions o, const char* what) {
    EXPECT_THAT(std::string(GenerateSynthetic(o).status().message()), HasSubstr(what));
  };
  SyntheticOptions o = Small();
  o.rank = 0;
  check(o, "rank=0");
  o = Small();
  o.noise = -1;
  check(o, "noise=-1");
  o = Small();
  o.range = {5, 5};
  check(o, "need finite min < max");
  o = Small();
  o.density = 1.5;
  check(o, "density=1.5");
}

// Rating variance and how much a rank-5 MF explains: the defaults must make a
// dataset on which MF clearly beats predicting the global mean.
TEST(DataSyntheticTest, DefaultsHaveStructureThatMatrixFactorizationLearns) {
  ASSERT_OK_AND_ASSIGN(auto d, GenerateSynthetic({}));
  // Hold out every 10th rating.
  std::vector<Rating> train, test;
  for (size_t r = 0; r < d.ratings.size(); ++r) {
    (r % 10 == 0 ? test : train).push_back(d.ratings[r]);
  }
  double mean = 0;
  for (const Rating& r : train) mean += r.value;
  mean /= static_cast<double>(train.size());
  double var = 0;
  for (const Rating& r : d.ratings) var += (r.value - mean) * (r.value - mean);
  var /= static_cast<double>(d.ratings.size());
  EXPECT_GE(var, 1.0) << "ratings should spread over the range";

  // Plain rank-5 SGD MF, no biases (like the FMF models).
  constexpr int k = 5;
  random::Csprng rng = random::Csprng::FromSeed(1);
  const double init = std::sqrt(mean / k);
  std::vector<double> u(static_cast<size_t>(d.num_users) * k),
      v(static_cast<size_t>(d.num_items) * k);
  for (double& x : u) x = init * (0.5 + rng.NextDouble());
  for (double& x : v) x = init * (0.5 + rng.NextDouble());
  auto predict = [&](const Rating& r) {
    double s = 0;
    for (int l = 0; l < k; ++l) s += u[r.user * k + l] * v[r.item * k + l];
    return s;
  };
  for (int epoch = 0; epoch < 60; ++epoch) {
    std::shuffle(train.begin(), train.end(), rng);
    for (const Rating& r : train) {
      const double e = r.value - predict(r);
      for (int l = 0; l < k; ++l) {
        double& a = u[r.user * k + l];
        double& b = v[r.item * k + l];
        const double a0 = a;
        a += 0.02 * (e * b - 0.05 * a);
        b += 0.02 * (e * a0 - 0.05 * b);
      }
    }
  }
  double mse_mean = 0, mse_mf = 0;
  for (const Rating& r : test) {
    mse_mean += (r.value - mean) * (r.value - mean);
    const double p = std::clamp(predict(r), 1.0, 5.0);
    mse_mf += (r.value - p) * (r.value - p);
  }
  mse_mean /= static_cast<double>(test.size());
  mse_mf /= static_cast<double>(test.size());
  RecordProperty("mse_mean", std::to_string(mse_mean));
  RecordProperty("mse_mf", std::to_string(mse_mf));
  std::printf("rating variance %.3f, test MSE: global mean %.3f, rank-5 MF %.3f\n", var, mse_mean,
              mse_mf);
  EXPECT_LT(mse_mf, 0.5 * mse_mean);
}

TEST(DataSyntheticOptionsTest, EmptyGivesDefaults) {
  ASSERT_OK_AND_ASSIGN(auto o, ParseSyntheticOptions(""));
  EXPECT_EQ(o.num_users, 600);
  EXPECT_EQ(o.num_items, 400);
  EXPECT_EQ(o.density, 0.1);
  EXPECT_EQ(o.rank, 5);
  EXPECT_EQ(o.noise, 0.5);
  EXPECT_EQ(o.range.min, 1.0);
  EXPECT_EQ(o.range.max, 5.0);
  EXPECT_EQ(o.seed, 42u);
}

TEST(DataSyntheticOptionsTest, EveryKey) {
  auto o = ParseSyntheticOptions(
      "users=100, items=50,density=0.25,rank=3,noise=0.1,min=0,max=10,seed=18446744073709551615");
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->num_users, 100);
  EXPECT_EQ(o->num_items, 50);
  EXPECT_EQ(o->density, 0.25);
  EXPECT_EQ(o->rank, 3);
  EXPECT_EQ(o->noise, 0.1);
  EXPECT_EQ(o->range.min, 0.0);
  EXPECT_EQ(o->range.max, 10.0);
  EXPECT_EQ(o->seed, 18446744073709551615u);
}

TEST(DataSyntheticOptionsTest, FormatRoundTrips) {
  SyntheticOptions o = Small();
  o.density = 0.123456789012345;
  o.noise = 1.0 / 3.0;
  ASSERT_OK_AND_ASSIGN(auto back, ParseSyntheticOptions(FormatSyntheticOptions(o)));
  EXPECT_EQ(back.density, o.density);
  EXPECT_EQ(back.noise, o.noise);
  EXPECT_EQ(FormatSyntheticOptions(back), FormatSyntheticOptions(o));
}

TEST(DataSyntheticOptionsTest, UnknownKeyNamesItAndListsValidKeys) {
  auto o = ParseSyntheticOptions("users=10,colour=blue");
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(o.status().message()), HasSubstr("unknown synthetic option 'colour'"));
  EXPECT_THAT(std::string(o.status().message()),
              HasSubstr("users, items, density, rank, noise, min, max, seed"));
}

TEST(DataSyntheticOptionsTest, BadValuesNameTheKey) {
  EXPECT_THAT(std::string(ParseSyntheticOptions("users=ten").status().message()),
              HasSubstr("users='ten' is not a positive integer"));
  EXPECT_THAT(std::string(ParseSyntheticOptions("users=0").status().message()),
              HasSubstr("users='0'"));
  EXPECT_THAT(std::string(ParseSyntheticOptions("noise=nan").status().message()),
              HasSubstr("noise='nan' is not a finite number"));
  EXPECT_THAT(std::string(ParseSyntheticOptions("seed=-1").status().message()),
              HasSubstr("seed='-1'"));
  EXPECT_THAT(std::string(ParseSyntheticOptions("users").status().message()),
              HasSubstr("'users' is not key=value"));
  EXPECT_THAT(std::string(ParseSyntheticOptions("rank=2,rank=3").status().message()),
              HasSubstr("'rank' is given twice"));
  EXPECT_THAT(std::string(ParseSyntheticOptions("min=5,max=1").status().message()),
              HasSubstr("min < max"));
}

}  // namespace
}  // namespace fedmf::data
