// S2 with the semi-honest third party, and S3's iterations: what the
// recommender decodes, and what the third party sees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/dp/noise.h"
#include "common/hua/model.h"
#include "common/hua/perturbation.h"
#include "common/hua/streams.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/hua/world.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::hua {
namespace {

using random::Csprng;
using testing::MakeWorld;
using testing::RunInit;
using testing::RunMaskedPass;
using testing::SmallRatings;

constexpr int32_t kItems = 4;
constexpr int32_t kDim = 6;

// Re-derives what each role draws from its stream (labels as in user.cc,
// recommender.cc) so the tests can state the intended noise exactly.
struct Expected {
  const testing::World& w;

  std::vector<double> ItemRow(const char* label, int32_t item, bool exponential) const {
    Csprng rng = RecommenderStream(*w.root).Fork(label);
    std::vector<double> row(kDim);
    for (int32_t j = 0; j <= item; ++j) {
      if (exponential) {
        row = ExponentialVector(rng, kDim);
      } else {
        FillInitialProfile(rng, row);
      }
    }
    return row;
  }
  std::vector<double> UserProfile(int32_t i) const {
    Csprng rng = UserStream(*w.root, i).Fork("init");
    std::vector<double> u(kDim);
    FillInitialProfile(rng, u);
    return u;
  }
  // The user's standard-normal block row for `item` from stream `label`.
  std::vector<double> UserZ(int32_t i, const std::string& label, int32_t item) const {
    std::vector<RatedItem> r = w.ratings[i];
    std::sort(r.begin(), r.end(), [](auto& a, auto& b) { return a.item < b.item; });
    Csprng rng = UserStream(*w.root, i).Fork(label);
    std::vector<double> z(r.size() * kDim);
    dp::FillGaussian(rng, 1.0, z.data(), z.size());
    for (size_t p = 0; p < r.size(); ++p) {
      if (r[p].item == item) return {z.begin() + p * kDim, z.begin() + (p + 1) * kDim};
    }
    ADD_FAILURE() << "user " << i << " did not rate " << item;
    return {};
  }
  double Rating(int32_t i, int32_t item) const {
    for (const RatedItem& r : w.ratings[i]) {
      if (r.item == item) return r.rating;
    }
    return NAN;
  }
  std::vector<int32_t> Raters(int32_t item, const std::vector<int32_t>& among) const {
    std::vector<int32_t> out;
    for (int32_t i : among) {
      if (!std::isnan(Rating(i, item))) out.push_back(i);
    }
    return out;
  }
};

void Accumulate(std::vector<double>& acc, const std::vector<double>& x) {
  for (size_t l = 0; l < acc.size(); ++l) acc[l] += x[l];
}

TEST(MaskedAggregation, DecodedSumIsTrueSumPlusIntendedNoise) {
  auto w = MakeWorld(Scenario::kUntrustedThirdParty, 7, SmallRatings(), kItems, kDim, 1.0);
  ASSERT_NE(w, nullptr);
  const std::vector<int32_t> all = {0, 1, 2, 3, 4, 5};
  ASSERT_OK_AND_ASSIGN(auto round, w->server->StartIteration(all));
  ASSERT_OK_AND_ASSIGN(auto next, RunMaskedPass(*w, round, {}));
  EXPECT_TRUE(next.requests.empty());

  const Expected e{*w};
  const double b = LaplaceScale(EpsilonPerRelease(w->params), w->range, kDim);
  for (int32_t j = 0; j < kItems; ++j) {
    const std::vector<double> v = e.ItemRow("init", j, false);
    const std::vector<double> h = e.ItemRow("h", j, true);
    const std::vector<double> h_rho = e.ItemRow("h-rho/1", j, true);
    const std::vector<int32_t> raters = e.Raters(j, all);
    const auto k = static_cast<int32_t>(raters.size());
    std::vector<double> truth(kDim, 0.0), noise(kDim, 0.0);
    for (int32_t i : raters) {
      AddItemGradient(e.UserProfile(i), v, e.Rating(i, j), truth);
      Accumulate(noise, LaplacePiece(h, e.UserZ(i, "eta", j), k, b));
      Accumulate(noise, LaplacePiece(h_rho, e.UserZ(i, "rho~/1", j), k, b));
    }
    const std::vector<double>* decoded = w->server->decoded_sum(j);
    ASSERT_NE(decoded, nullptr) << "item " << j;
    double noise_norm = 0;
    for (int32_t l = 0; l < kDim; ++l) {
      // Fixed-point rounding: at most k * 2^-25 per coordinate.
      EXPECT_NEAR((*decoded)[l], truth[l] + noise[l], 1e-6) << "item " << j << " coord " << l;
      noise_norm += noise[l] * noise[l];
    }
    EXPECT_GT(std::sqrt(noise_norm), 1.0);  // eps = 1: the noise is really there
  }
  ASSERT_THAT(w->server->FinishIteration(), IsOk());
}

TEST(MaskedAggregation, S3DecodedSumCarriesTheFixedEta) {
  auto w = MakeWorld(Scenario::kDynamic, 8, SmallRatings(), kItems, kDim, 0.5);
  ASSERT_NE(w, nullptr);
  const std::vector<int32_t> all = {0, 1, 2, 3, 4, 5};
  ASSERT_THAT(RunInit(*w, all), IsOk());
  const std::vector<int32_t> now = {0, 2, 4};  // k' users online in iteration 1
  ASSERT_OK_AND_ASSIGN(auto round, w->server->StartIteration(now));
  ASSERT_THAT(RunMaskedPass(*w, round, {}), IsOk());

  const Expected e{*w};
  const double b = LaplaceScale(EpsilonPerRelease(w->params), w->range, kDim);
  for (int32_t j = 0; j < kItems; ++j) {
    const std::vector<double> v = e.ItemRow("init", j, false);
    const std::vector<double> h = e.ItemRow("h", j, true);
    const std::vector<double> h_rho = e.ItemRow("h-rho/1", j, true);
    std::vector<double> expected(kDim, 0.0);
    const std::vector<int32_t> init_users = e.Raters(j, all);
    for (int32_t i : init_users) {
      Accumulate(expected, LaplacePiece(h, e.UserZ(i, "eta", j), init_users.size(), b));
    }
    const std::vector<int32_t> raters = e.Raters(j, now);
    for (int32_t i : raters) {
      AddItemGradient(e.UserProfile(i), v, e.Rating(i, j), expected);
      Accumulate(expected, LaplacePiece(h_rho, e.UserZ(i, "rho~/1", j), raters.size(), b));
    }
    const std::vector<double>* decoded = w->server->decoded_sum(j);
    ASSERT_NE(decoded, nullptr) << "item " << j;
    for (int32_t l = 0; l < kDim; ++l) EXPECT_NEAR((*decoded)[l], expected[l], 1e-6);
  }
}

// Pearson chi-square of the top 4 bits against uniform (15 d.o.f.);
// 37.7 is the 0.999 quantile.
double ChiSquareTopBits(const std::vector<uint64_t>& values) {
  std::vector<double> bins(16, 0.0);
  for (uint64_t x : values) bins[x >> 60] += 1;
  const double expect = static_cast<double>(values.size()) / 16;
  double chi = 0;
  for (double c : bins) chi += (c - expect) * (c - expect) / expect;
  return chi;
}
constexpr double kChi15At999 = 37.7;

// What the third party receives from one user, over many runs, for a small
// and for an extreme rating: uniform on Z_2^64 either way.
TEST(MaskedAggregation, ThirdPartysViewOfOneReportIsUniform) {
  for (float rating : {1.0f, 5.0f}) {
    std::vector<uint64_t> seen_values;
    for (uint64_t seed = 0; seed < 1500; ++seed) {
      auto ratings = SmallRatings();
      ratings[4][0].rating = rating;
      auto w = MakeWorld(Scenario::kUntrustedThirdParty, 1000 + seed, ratings, kItems, kDim, 1.0);
      auto round = w->server->StartIteration({0, 1, 2, 3, 4, 5});
      std::vector<MaskedReport> seen;
      ASSERT_THAT(RunMaskedPass(*w, *round, {}, &seen), IsOk());
      for (const MaskedReport& r : seen) {
        if (r.user != 4) continue;
        ASSERT_EQ(r.items[0].item, 0);
        seen_values.insert(seen_values.end(), r.items[0].value.begin(), r.items[0].value.end());
      }
    }
    EXPECT_LT(ChiSquareTopBits(seen_values), kChi15At999) << "rating " << rating;
  }
}

// The third party's sums are still padded with Sigma psi: they do not
// decode, and they are uniform too.
TEST(MaskedAggregation, SumsWithoutTheMasksDecodeToNoise) {
  std::vector<uint64_t> sums;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    auto w =
        MakeWorld(Scenario::kUntrustedThirdParty, 5000 + seed, SmallRatings(), kItems, kDim, 1.0);
    auto round = w->server->StartIteration({0, 1, 2, 3, 4, 5});
    ASSERT_THAT(w->tp->Begin(round->plan), IsOk());
    for (const IterationRequest& req : round->requests) {
      ASSERT_THAT(w->tp->Accept(*w->users[req.user].HandleMasked(req)), IsOk());
    }
    ASSERT_OK_AND_ASSIGN(auto forward, w->tp->Flush());
    ASSERT_EQ(forward.items.size(), static_cast<size_t>(kItems));
    for (const ItemSum& s : forward.items) {
      auto decoded = w->codec->DecodeSum(s.sum, s.contributors);
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
      sums.insert(sums.end(), s.sum.begin(), s.sum.end());
    }
    // The recommender, who has Sigma psi, decodes them.
    ASSERT_THAT(w->server->AcceptForward(forward), IsOk());
  }
  EXPECT_LT(ChiSquareTopBits(sums), kChi15At999);
}

TEST(MaskedAggregation, ThirdPartyAcceptsOnlyPlannedReportsAndWithholdsPartialSums) {
  auto w = MakeWorld(Scenario::kUntrustedThirdParty, 9, SmallRatings(), kItems, kDim, 1.0);
  auto round = w->server->StartIteration({0, 1, 2, 3, 4});  // user 5 not asked
  ASSERT_THAT(round, IsOk());
  ASSERT_THAT(w->tp->Begin(round->plan), IsOk());
  MaskedReport first;
  for (const IterationRequest& req : round->requests) {
    if (req.user == 3) continue;  // vanishes
    MaskedReport r = *w->users[req.user].HandleMasked(req);
    ASSERT_THAT(w->tp->Accept(r), IsOk());
    if (req.user == 0) first = r;
  }
  EXPECT_EQ(w->tp->Accept(first).code(), absl::StatusCode::kAlreadyExists);
  MaskedReport stranger = first;
  stranger.user = 5;
  EXPECT_EQ(w->tp->Accept(stranger).code(), absl::StatusCode::kPermissionDenied);
  MaskedReport stale = first;
  stale.round = 2;
  EXPECT_EQ(w->tp->Accept(stale).code(), absl::StatusCode::kInvalidArgument);

  ASSERT_OK_AND_ASSIGN(auto forward, w->tp->Flush());
  // User 3 rated items 0, 1, 3: their sums are withheld; item 2 goes through.
  EXPECT_EQ(forward.incomplete_items, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(forward.missing_users, (std::vector<int32_t>{3}));
  ASSERT_EQ(forward.items.size(), 1u);
  EXPECT_EQ(forward.items[0].item, 2);
  // The recommender re-plans the withheld items among the others.
  ASSERT_OK_AND_ASSIGN(auto repair, w->server->AcceptForward(forward));
  EXPECT_EQ(repair.plan.pass, 1);
  for (const IterationRequest& req : repair.requests) EXPECT_NE(req.user, 3);
  EXPECT_EQ(w->server->FinishIteration().status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(MaskedAggregation, RecommenderRejectsForeignForwards) {
  auto w = MakeWorld(Scenario::kUntrustedThirdParty, 10, SmallRatings(), kItems, kDim, 1.0);
  auto round = w->server->StartIteration({0, 1, 2, 3, 4, 5});
  AggregateForward f;
  f.round = 7;
  EXPECT_THAT(w->server->AcceptForward(f), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(w->server->StartIteration({0}).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace fedmf::hua
