// The privacy of Hua et al.'s scenarios (docs/privacy.md, section hua).
//
// The paper's mechanism (paper_noise) has no valid epsilon: it is reported as
// +inf, and PaperMechanism... shows why through the real User — one rating
// moves the user's other reports by an amount that grows with the server's v.
//
// The valid variant (the default): every user bounds her whole report vector
// per iteration by C, whatever the server sends, so a value change of her
// ratings moves it by at most Delta = 2C — the sensitivity the accountant is
// given. The search below runs real Users on neighbouring datasets (random
// users, a heavy user trimmed to theta, ratings at the ends of the range, one
// rating or all of them changed) against honest, aligned, huge and garbage
// item rows, and asserts the pre-noise change of the whole report vector of
// every iteration is <= Delta (and reaches close to it, so the bound is not
// vacuous). Then the distributed noise: the decoded sum's noise has variance
// sigma^2, and the third party's rules keep it so against a lying recommender.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/dp/calibration.h"
#include "common/hua/accounting.h"
#include "common/hua/params.h"
#include "common/hua/streams.h"
#include "common/hua/third_party.h"
#include "common/hua/user.h"
#include "common/hua/zp_codec.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/hua/world.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

#ifndef ASSERT_OK_AND_ASSIGN
#define HUA_CONCAT_INNER(a, b) a##b
#define HUA_CONCAT(a, b) HUA_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL(HUA_CONCAT(status_or_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL(var, lhs, expr) \
  auto var = (expr);                              \
  ASSERT_TRUE(var.ok()) << var.status();          \
  lhs = std::move(*var)
#endif

namespace fedmf::hua {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const data::RatingRange kRange{1.0, 5.0};

TEST(HuaPrivacyTest, PaperMechanismHasNoFiniteEpsilon) {
  for (Scenario s : {Scenario::kTrusted, Scenario::kUntrusted, Scenario::kUntrustedThirdParty,
                     Scenario::kDynamic}) {
    HuaParams p;
    p.scenario = s;
    p.epsilon = 1.0;
    p.paper_noise = true;
    ASSERT_OK_AND_ASSIGN(HuaPrivacy plan, PlanPrivacy(p, kRange));
    EXPECT_FALSE(plan.valid) << ScenarioName(s);
    EXPECT_TRUE(std::isinf(plan.epsilon)) << ScenarioName(s);
    EXPECT_FALSE(IsPrivate(p));
    ASSERT_OK_AND_ASSIGN(double eps, UserEpsilon(plan, 1));
    EXPECT_TRUE(std::isinf(eps));
    const std::string why = PrivacyCaveat(s);
    EXPECT_NE(why.find("no valid epsilon"), std::string::npos) << why;
    // The same budget in the valid variant is a finite, held epsilon.
    p.paper_noise = false;
    ASSERT_OK_AND_ASSIGN(HuaPrivacy valid, PlanPrivacy(p, kRange));
    EXPECT_TRUE(valid.valid);
    EXPECT_LE(valid.epsilon, 1.0 + 1e-9) << ScenarioName(s);
    EXPECT_TRUE(IsPrivate(p));
  }
}

// S2 with the paper's mechanism, no noise (the pre-noise release): user i's
// report on item 1 in iteration 2, for D and for D' where r_i0 changed from 1
// to 5 (the paper's neighbours, Delta = 4), with the server's v_j scaled by
// `scale`.
double PaperItem1ReportMoves(double scale) {
  HuaParams p;
  p.scenario = Scenario::kUntrusted;
  p.dim = 3;
  p.epsilon = kInf;
  p.paper_noise = true;
  std::vector<std::vector<double>> reports;
  for (double r0 : {1.0, 5.0}) {
    auto user = User::Create(0, {{0, r0}, {1, 3.0}, {2, 4.0}}, p, kRange, nullptr,
                             random::Csprng::FromSeed(5));
    EXPECT_THAT(user, IsOk());
    const std::vector<std::vector<double>> v = {{0.9 * scale, 0.1 * scale, 0.3 * scale},
                                                {0.2 * scale, 0.8 * scale, 0.4 * scale},
                                                {0.5 * scale, 0.5 * scale, 0.1 * scale}};
    std::vector<double> item1;
    for (int32_t t = 1; t <= 2; ++t) {
      IterationRequest req{t, 0, 0, {}};
      for (int32_t j = 0; j < 3; ++j) {
        ItemRequest it;
        it.item = j;
        it.v = v[static_cast<size_t>(j)];
        if (t == 1) {
          it.eta_users = 1;
          it.h = {1.0, 0.0, 0.0};
        }
        req.items.push_back(it);
      }
      auto report = user->HandleDirect(req);
      EXPECT_THAT(report, IsOk());
      if (t == 2) item1 = report->items[1].value;
    }
    reports.push_back(item1);
  }
  double sq = 0;
  for (size_t l = 0; l < reports[0].size(); ++l) {
    sq += (reports[0][l] - reports[1][l]) * (reports[0][l] - reports[1][l]);
  }
  return std::sqrt(sq);
}

TEST(HuaPrivacyTest, PaperMechanismOneRatingMovesTheOtherReportsWithoutBound) {
  const double small = PaperItem1ReportMoves(1.0);
  const double large = PaperItem1ReportMoves(30.0);
  std::printf(
      "Hua S2 (paper), r_i0 changed by 4: the report on item 1 in iteration 2 moves by %.4g "
      "(v as given), %.4g (v x 30)\n",
      small, large);
  // The per-release analysis charges this change nothing (item 1's rating
  // did not change) ...
  EXPECT_GT(small, 1e-3);
  // ... and it has no bound: it grows with the server's v.
  EXPECT_GT(large, 10 * small);
}

TEST(HuaPrivacyTest, PlanCalibratesTheRdpAccountantToTheBudget) {
  HuaParams p;
  p.scenario = Scenario::kUntrusted;
  p.epsilon = 1.0;
  p.iterations = 100;
  p.theta = 20;
  p.clip = 0;  // the derived bound
  ASSERT_OK_AND_ASSIGN(HuaPrivacy plan, PlanPrivacy(p, kRange));
  // R = 5: ||g_ij|| <= 2 (4 + 5) sqrt(5), times sqrt(theta).
  EXPECT_NEAR(plan.clip, 2 * 9 * std::sqrt(5.0) * std::sqrt(20.0), 1e-9);
  EXPECT_DOUBLE_EQ(plan.sensitivity, 2 * plan.clip);
  EXPECT_DOUBLE_EQ(plan.sigma, plan.noise_multiplier * plan.sensitivity);
  EXPECT_EQ(plan.releases, 100);
  EXPECT_LE(plan.epsilon, 1.0);
  EXPECT_GT(plan.epsilon, 0.99);
  ASSERT_OK_AND_ASSIGN(double direct, dp::ComputeEpsilon(1.0, plan.noise_multiplier, 100, 1e-5));
  EXPECT_DOUBLE_EQ(plan.epsilon, direct);
  // A user in fewer iterations spent less; none spent more than the job.
  ASSERT_OK_AND_ASSIGN(double ten, UserEpsilon(plan, 10));
  EXPECT_LT(ten, plan.epsilon);
  ASSERT_OK_AND_ASSIGN(double none, UserEpsilon(plan, 0));
  EXPECT_EQ(none, 0);
  // A clip below the derived bound binds: C = clip.
  p.clip = 3;
  ASSERT_OK_AND_ASSIGN(HuaPrivacy clipped, PlanPrivacy(p, kRange));
  EXPECT_DOUBLE_EQ(clipped.clip, 3);
  EXPECT_DOUBLE_EQ(clipped.noise_multiplier, plan.noise_multiplier);
  // Without noise: epsilon inf, sigma 0.
  p.epsilon = kInf;
  ASSERT_OK_AND_ASSIGN(HuaPrivacy none_plan, PlanPrivacy(p, kRange));
  EXPECT_TRUE(std::isinf(none_plan.epsilon));
  EXPECT_EQ(none_plan.sigma, 0);
}

// ---------------------------------------------------------------- sensitivity search

struct ServerRows {
  enum Kind { kHonest, kAligned, kHuge, kGarbage } kind;
  const char* name;
};

// The rows a server sends in iteration t: honest (norm <= sqrt(R)), all
// aligned with one direction (the largest coherent push), huge (1e6), or
// garbage of random signs and scales up to 1e9.
std::vector<double> Row(ServerRows::Kind kind, int32_t dim, random::Csprng& rng) {
  std::vector<double> v(dim);
  for (int32_t l = 0; l < dim; ++l) {
    switch (kind) {
      case ServerRows::kHonest: v[l] = (rng.NextDouble() - 0.5) * 1.2; break;
      case ServerRows::kAligned: v[l] = 1.0; break;
      case ServerRows::kHuge: v[l] = 1e6 * (rng.NextDouble() - 0.5); break;
      case ServerRows::kGarbage:
        v[l] = (rng.NextDouble() < 0.5 ? -1 : 1) * std::pow(10.0, 9 * rng.NextDouble());
        break;
    }
  }
  return v;
}

double Norm(const std::map<int32_t, std::vector<double>>& a,
            const std::map<int32_t, std::vector<double>>& b) {
  double sq = 0;
  for (const auto& [item, x] : a) {
    const std::vector<double>& y = b.at(item);
    for (size_t l = 0; l < x.size(); ++l) sq += (x[l] - y[l]) * (x[l] - y[l]);
  }
  return std::sqrt(sq);
}

// Runs D and D' side by side (same user stream, so the same trim and u(0))
// for `iterations` iterations against the same server rows, the masked path
// when `masked`; returns the largest ||G(D, t) - G(D', t)|| / Delta.
double WorstRatio(const HuaParams& p, const std::vector<RatedItem>& d,
                  const std::vector<RatedItem>& d2, ServerRows::Kind kind, uint64_t seed,
                  bool masked) {
  auto codec = ZpCodec::Create(p.zp);
  EXPECT_THAT(codec, IsOk());
  HuaParams q = p;
  q.scenario = masked ? Scenario::kUntrustedThirdParty : Scenario::kUntrusted;
  auto a = User::Create(7, d, q, kRange, &*codec, random::Csprng::FromSeed(seed));
  auto b = User::Create(7, d2, q, kRange, &*codec, random::Csprng::FromSeed(seed));
  EXPECT_THAT(a, IsOk());
  EXPECT_THAT(b, IsOk());
  // The kept items do not depend on the values.
  EXPECT_EQ(a->Hello().items, b->Hello().items);
  EXPECT_LE(a->Hello().items.size(), static_cast<size_t>(p.theta));
  const double delta = ReportSensitivity(q, kRange);
  random::Csprng rows = random::Csprng::FromSeed(seed + 1000);
  double worst = 0;
  for (int32_t t = 1; t <= q.iterations; ++t) {
    IterationRequest req{t, 0, 7, {}};
    for (int32_t j : a->Hello().items) {
      ItemRequest it;
      it.item = j;
      it.v = Row(kind, q.dim, rows);
      it.rho_users = 3;
      it.mask.assign(q.dim, 0);
      req.items.push_back(it);
    }
    if (masked) {
      EXPECT_THAT(a->HandleMasked(req), IsOk());
      EXPECT_THAT(b->HandleMasked(req), IsOk());
    } else {
      auto ra = a->HandleDirect(req);
      auto rb = b->HandleDirect(req);
      EXPECT_THAT(ra, IsOk());
      EXPECT_THAT(rb, IsOk());
      // Without noise the released report is the pre-noise block itself.
      for (size_t k = 0; k < ra->items.size(); ++k) {
        EXPECT_EQ(ra->items[k].value, a->clean_blocks().at(ra->items[k].item));
      }
    }
    worst = std::max(worst, Norm(a->clean_blocks(), b->clean_blocks()) / delta);
  }
  return worst;
}

TEST(HuaPrivacyTest, WholeReportVectorMovesByAtMostDeltaOnNeighbouringDatasets) {
  random::Csprng gen = random::Csprng::FromSeed(59);
  const std::vector<ServerRows> servers{{ServerRows::kHonest, "honest"},
                                        {ServerRows::kAligned, "aligned"},
                                        {ServerRows::kHuge, "huge"},
                                        {ServerRows::kGarbage, "garbage"}};
  struct Case {
    const char* name;
    int32_t ratings;
    bool extremes;    // ratings at 1 and 5 only
    bool change_all;  // every value changes, not one
  };
  const std::vector<Case> cases{{"random user", 12, false, false},
                                {"heavy user (250 ratings, trimmed)", 250, false, false},
                                {"ratings at the ends", 15, true, false},
                                {"every value changed", 15, true, true}};
  int64_t checked = 0;
  for (double clip : {0.0, 3.0, 0.25}) {
    double reached = 0;
    for (const Case& c : cases) {
      for (const ServerRows& server : servers) {
        for (bool masked : {false, true}) {
          for (int trial = 0; trial < 3; ++trial) {
            HuaParams p;
            p.dim = 4;
            p.iterations = 8;
            p.epsilon = kInf;  // the pre-noise release
            p.theta = 10;
            p.clip = clip;
            p.gamma = 0.5;  // large steps: u_i moves far between releases
            std::vector<RatedItem> d;
            std::set<int32_t> items;
            while (static_cast<int32_t>(items.size()) < c.ratings) {
              items.insert(static_cast<int32_t>(gen.UniformInt(400)));
            }
            for (int32_t j : items) {
              const double r = c.extremes ? (gen.Bernoulli(0.5) ? 1.0 : 5.0)
                                          : 1.0 + static_cast<double>(gen.UniformInt(5));
              d.push_back({j, r});
            }
            std::vector<RatedItem> d2 = d;
            if (c.change_all) {
              for (RatedItem& r : d2) r.rating = 6.0 - r.rating;
            } else {
              RatedItem& r = d2[gen.UniformInt(d2.size())];
              r.rating = r.rating >= 3 ? 1.0 : 5.0;
            }
            const double ratio = WorstRatio(p, d, d2, server.kind, 100 + checked, masked);
            ++checked;
            EXPECT_LE(ratio, 1.0 + 1e-12)
                << c.name << ", " << server.name << ", clip " << clip << ", masked " << masked;
            reached = std::max(reached, ratio);
          }
        }
      }
    }
    std::printf("clip %g: the largest change of a user's whole report vector is %.4f Delta\n", clip,
                reached);
    // The bound is not vacuous: a binding C is nearly reached (D and D'
    // clipped in opposite directions); the derived bound is loose but the
    // change is still a sizeable part of it.
    if (clip > 0) {
      EXPECT_GT(reached, 0.9) << "clip " << clip;
    } else {
      EXPECT_GT(reached, 0.05);
    }
  }
  EXPECT_EQ(checked, 3 * 4 * 4 * 2 * 3);
}

// ---------------------------------------------------------------- users against a hostile server

HuaParams ValidS2(double epsilon) {
  HuaParams p;
  p.scenario = Scenario::kUntrustedThirdParty;
  p.dim = 3;
  p.iterations = 3;
  p.epsilon = epsilon;
  p.theta = 4;
  return p;
}

IterationRequest Request(int32_t t, int32_t pass, const std::vector<int32_t>& items, double scale,
                         int32_t shares) {
  IterationRequest req{t, pass, 1, {}};
  for (int32_t j : items) {
    ItemRequest it;
    it.item = j;
    it.v = {scale * (1 + j), -scale, scale / (1 + j)};
    it.rho_users = shares;
    it.mask.assign(3, 0);
    req.items.push_back(it);
  }
  return req;
}

TEST(HuaPrivacyTest, RepairPassResendsThePassZeroBlocksWhateverVItCarries) {
  const HuaParams p = ValidS2(kInf);
  ASSERT_OK_AND_ASSIGN(auto codec, ZpCodec::Create(p.zp));
  ASSERT_OK_AND_ASSIGN(User u, User::Create(1, {{0, 5}, {1, 2}, {2, 4}}, p, kRange, &codec,
                                            random::Csprng::FromSeed(3)));
  ASSERT_THAT(u.HandleMasked(Request(1, 0, {0, 1, 2}, 1.0, 2)), IsOk());
  const auto pass0 = u.clean_blocks();
  // The server changes v_j for the repair: the user re-sends pass 0's block.
  ASSERT_OK_AND_ASSIGN(auto repair, u.HandleMasked(Request(1, 1, {1}, 1e6, 1)));
  ASSERT_EQ(repair.items.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto decoded, codec.DecodeSum(repair.items[0].value, 1));
  for (int32_t l = 0; l < 3; ++l) EXPECT_NEAR(decoded[l], pass0.at(1)[l], 1e-6);
  EXPECT_EQ(repair.items[0].shares, 1);
  EXPECT_EQ(u.releases(), 1);
  // An item the pass-0 request did not hold is refused.
  EXPECT_THAT(u.HandleMasked(Request(1, 2, {3}, 1.0, 1)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(HuaPrivacyTest, UserRefusesIterationsBeyondItsTAndNeverReleasesTwicePerIteration) {
  const HuaParams p = ValidS2(1.0);  // T = 3
  ASSERT_OK_AND_ASSIGN(auto codec, ZpCodec::Create(p.zp));
  ASSERT_OK_AND_ASSIGN(
      User u, User::Create(1, {{0, 5}, {1, 2}}, p, kRange, &codec, random::Csprng::FromSeed(3)));
  for (int32_t t = 1; t <= 3; ++t) ASSERT_THAT(u.HandleMasked(Request(t, 0, {0, 1}, 1, 2)), IsOk());
  // A server that lies about T: iteration 4 is refused, nothing released.
  EXPECT_THAT(u.HandleMasked(Request(4, 0, {0, 1}, 1, 2)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // A replayed pass 0 of an answered iteration likewise.
  EXPECT_THAT(u.HandleMasked(Request(3, 0, {0, 1}, 1, 2)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(u.releases(), 3);
}

// ---------------------------------------------------------------- the distributed Gaussian

// k users report on one item; the recommender decodes the sum. Its noise
// (decoded sum minus the users' pre-noise blocks) has variance sigma^2 per
// coordinate, whatever k: the shares sigma^2 / k add up.
TEST(HuaPrivacyTest, DecodedSumCarriesTheCalibratedGaussianNoise) {
  HuaParams p = ValidS2(4.0);
  p.iterations = 40;
  p.dim = 5;
  ASSERT_OK_AND_ASSIGN(HuaPrivacy plan, PlanPrivacy(p, kRange));
  ASSERT_GT(plan.sigma, 0);
  ASSERT_OK_AND_ASSIGN(auto codec, ZpCodec::Create(p.zp));
  for (int32_t k : {1, 3, 8}) {
    double sum_sq = 0, sum = 0;
    int64_t n = 0;
    for (int run = 0; run < 30; ++run) {
      std::vector<User> users;
      for (int32_t i = 0; i < k; ++i) {
        ASSERT_OK_AND_ASSIGN(User u,
                             User::Create(i, {{0, 1.0 + i % 5}}, p, kRange, &codec,
                                          UserStream(random::Csprng::FromSeed(run * 10 + k), i)));
        users.push_back(std::move(u));
      }
      for (int32_t t = 1; t <= p.iterations; ++t) {
        std::vector<uint64_t> acc(p.dim, 0);
        std::vector<double> clean(p.dim, 0);
        for (User& u : users) {
          IterationRequest req{t, 0, u.id(), {}};
          ItemRequest it;
          it.item = 0;
          it.v = {0.3, 0.2, 0.1, 0.4, 0.5};
          it.rho_users = k;
          it.mask.assign(p.dim, 0);
          req.items.push_back(it);
          ASSERT_OK_AND_ASSIGN(MaskedReport r, u.HandleMasked(req));
          ZpCodec::Add(acc, r.items[0].value);
          for (int32_t l = 0; l < p.dim; ++l) clean[l] += u.clean_blocks().at(0)[l];
        }
        ASSERT_OK_AND_ASSIGN(auto decoded, codec.DecodeSum(acc, k));
        for (int32_t l = 0; l < p.dim; ++l) {
          const double noise = (decoded[l] - clean[l]) / plan.sigma;
          sum += noise;
          sum_sq += noise * noise;
          ++n;
        }
      }
    }
    const double mean = sum / n;
    const double var = sum_sq / n - mean * mean;
    std::printf("k = %d: decoded-sum noise / sigma: mean %.4f, variance %.4f over %lld draws\n", k,
                mean, var, static_cast<long long>(n));
    // 6000 draws: the variance's standard error is ~0.018.
    EXPECT_NEAR(var, 1.0, 0.09) << "k = " << k;
    EXPECT_NEAR(mean, 0.0, 0.06) << "k = " << k;
  }
}

TEST(HuaPrivacyTest, ThirdPartyKeepsOneSumPerIterationAndItemWithTheSharesItWasSplitInto) {
  ASSERT_OK_AND_ASSIGN(ThirdParty tp,
                       ThirdParty::Create(Scenario::kDynamic, 2, random::Csprng::FromSeed(1)));
  AggregationPlan plan{Phase::kIteration, 1, 0, {{0, {1, 2}}, {1, {2}}}, true};
  ASSERT_THAT(tp.Begin(plan), IsOk());
  // A user told k' = 5 by a lying recommender: the plan has 2 users for item 0.
  EXPECT_THAT(tp.Accept({Phase::kIteration, 1, 0, 1, {{0, {1, 1}, 5}}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_THAT(tp.Accept({Phase::kIteration, 1, 0, 1, {{0, {1, 1}, 2}}}), IsOk());
  ASSERT_THAT(tp.Accept({Phase::kIteration, 1, 0, 2, {{0, {2, 2}, 2}, {1, {3, 3}, 1}}}), IsOk());
  ASSERT_OK_AND_ASSIGN(AggregateForward f, tp.Flush());
  ASSERT_EQ(f.items.size(), 2u);
  EXPECT_EQ(f.items[0].sum, (std::vector<uint64_t>{3, 3}));  // no alpha_j pad
  // A second sum of item 0 in iteration 1 (a "repair" of a forwarded item).
  EXPECT_THAT(tp.Begin({Phase::kIteration, 1, 1, {{0, {1}}}, true}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // An earlier iteration.
  ASSERT_THAT(tp.Begin({Phase::kIteration, 3, 0, {{0, {1}}}, true}), IsOk());
  ASSERT_THAT(tp.Flush(), IsOk());
  EXPECT_THAT(tp.Begin({Phase::kIteration, 2, 0, {{0, {1}}}, true}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // The paper's mechanism cannot be mixed in.
  EXPECT_THAT(tp.Begin({Phase::kIteration, 4, 0, {{0, {1}}}, false}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::hua
