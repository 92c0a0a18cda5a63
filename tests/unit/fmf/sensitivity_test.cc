// Empirical sensitivity: for every setting x granularity fedmf offers, the
// pre-noise release of one Stage-2 iteration (the clipped gradient sums a
// party noises and sends) moves by at most the Delta the accountant was given
// (sigma / z from PlanNoise) between neighbouring datasets — random ones and
// adversarial ones (a heavy user, extreme and out-of-range ratings, a server
// sending unclipped or negative matrices). Everything runs through the real
// PartySession (clamping, trimming, Stage 1, the shared-matrix projection,
// ComputeDpGradients), with the whole party in the batch (the worst case of
// Poisson sampling: the differing user is in it). The size release (the
// count of ratings the DP steps use, or of users with per-user clipping,
// NoisePlan::count_*) is checked the same way.
//
// HFL per rating is refused (job_config.cc); the last test documents why:
// the same measurement exceeds 2 R^{3/2}. If it ever stops exceeding it, the
// refusal may be revisited — with a proof in docs/privacy.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/data/partition.h"
#include "common/dp/ledger.h"
#include "common/fmf/admitted_job.h"
#include "common/fmf/noise_plan.h"
#include "common/fmf/party_session.h"
#include "common/mf/clipping.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::fmf {
namespace {

constexpr double kR = 5.0;
constexpr int32_t kDim = 6;
constexpr int32_t kItems = 300;

JobConfig Job(Setting setting, Granularity granularity) {
  JobConfig c;
  c.setting = setting;
  c.split = setting == Setting::kVfl || setting == Setting::kLocal ? SplitKind::kVertical
                                                                   : SplitKind::kHorizontal;
  c.granularity = granularity;
  c.rounds = 2;
  c.local_iters = 2;
  c.dim = kDim;
  c.sample_rate = 0.1;
  c.epsilon = 1.0;
  c.vfl_finetune_iters = 2;
  c.pretrain_epochs = 5;
  c.rating_max = kR;
  c.seed = 3;
  return c;
}

// One party's data: `users` users, user u rating counts[u] distinct items.
// Values from `value(u, k)`; the last user is the one a neighbour removes.
struct Data {
  std::vector<data::Rating> ratings;
  int32_t users = 0;
};

data::PartyData ToParty(const Data& d) {
  data::PartyData p;
  p.party = 0;
  p.range = {0.0, kR};  // declared [0, R]: R is the clipping bound
  for (int32_t u = 0; u < d.users; ++u) p.global_users.push_back(u);
  for (int32_t j = 0; j < kItems; ++j) p.global_items.push_back(j);
  p.train = d.ratings;
  return p;
}

Data RandomData(random::Csprng& rng, int32_t users, int32_t heavy_count, bool extreme) {
  Data d;
  d.users = users;
  for (int32_t u = 0; u < users; ++u) {
    const int32_t count =
        u == users - 1 ? heavy_count : 1 + static_cast<int32_t>(rng.UniformInt(20));
    std::vector<int32_t> items(kItems);
    std::iota(items.begin(), items.end(), 0);
    for (int32_t k = 0; k < count; ++k) {
      std::swap(items[k], items[k + rng.UniformInt(static_cast<uint64_t>(kItems - k))]);
      // Extreme: 0 or R. (Values outside the declared range never reach a
      // session: PartySession::Create refuses them, party_session_test.)
      double v =
          extreme ? (rng.UniformInt(2) ? 0.0 : kR) : 1 + static_cast<double>(rng.UniformInt(5));
      d.ratings.push_back({u, items[k], static_cast<float>(v)});
    }
  }
  return d;
}

// Shared matrices the server might send: random feasible rows, every row at
// the top of the ball and aligned (maximal <u,v>), or garbage (huge and
// negative entries) that the party must project before use.
mf::Matrix Shared(int32_t rows, int kind, random::Csprng& rng) {
  mf::Matrix m(rows, kDim);
  for (int32_t i = 0; i < rows; ++i) {
    for (int32_t l = 0; l < kDim; ++l) {
      switch (kind) {
        case 0: m(i, l) = rng.NextDouble(); break;
        case 1: m(i, l) = l == 0 ? std::sqrt(kR) : 0.0; break;
        default: m(i, l) = (rng.NextDouble() - 0.3) * 1e4; break;
      }
    }
  }
  if (kind == 0) mf::ClipEmbeddings(m, kR);
  return m;
}

struct Release {
  std::unique_ptr<PartySession> session;
  DpScratch grad;
};

// Creates the party for `d`, runs Stage 1 at `initial` (HFL), and takes the
// pre-noise release of the whole party at `shared`.
Release RunParty(const JobConfig& config, const NoisePlan& plan, const Data& d,
                 const mf::Matrix& initial, const mf::Matrix& shared, dp::PrivacyLedger* ledger) {
  Release r;
  const bool vertical = config.split == SplitKind::kVertical;
  // VFL: every party holds every user, so the shared U has a row per user of
  // the larger dataset; the removed user's row is there but has no ratings.
  const int32_t users = vertical ? static_cast<int32_t>(initial.rows()) : d.users;
  data::PartyData party = ToParty(d);
  party.global_users.clear();
  for (int32_t u = 0; u < users; ++u) party.global_users.push_back(u);
  auto admitted = AdmittedJob::Admit(config, {party.range, 77, "party-0"}, nullptr);
  EXPECT_THAT(admitted, IsOk());
  EXPECT_EQ(admitted->plan().noise_multiplier, plan.noise_multiplier);
  auto s = PartySession::Create(std::move(*admitted), party, users, kItems, ledger);
  EXPECT_THAT(s, IsOk());
  r.session = std::move(*s);
  // DP local-only runs alone (TrainAlone), without a Stage 1.
  if (config.setting != Setting::kLocal) {
    EXPECT_TRUE(r.session->Pretrain(initial).ok());
  }
  // Every member of the job's sampling unit (users, or ratings per rating).
  const std::vector<int32_t> all =
      FullDpBatch(r.session->dp_training_matrix(), r.session->Stage2Spec().sampling_unit);
  auto g = r.session->PreNoiseRelease(all, shared);
  EXPECT_THAT(g, IsOk());
  r.grad = std::move(*g);
  return r;
}

double Norm2(const mf::Matrix& m) { return m.size() == 0 ? 0.0 : m.squaredNorm(); }

// ||G(D) - G(D')|| over the released matrices. For HFL the released V has
// the same rows in both; for VFL the released U too (all users).
double ReleaseDistance(const DpScratch& a, const DpScratch& b) {
  double sq = 0;
  if (a.grad_u.size() > 0) sq += (a.grad_u - b.grad_u).squaredNorm();
  if (a.grad_v.size() > 0) sq += (a.grad_v - b.grad_v).squaredNorm();
  return std::sqrt(sq);
}

// The Delta the accountant's z multiplies: sigma / z of the Stage-2 spec.
double PlannedDelta(const PartySession& s, const NoisePlan& plan) {
  const DpIterationSpec spec = s.Stage2Spec();
  const double sigma = spec.update_u ? spec.sigma_u : spec.sigma_v;
  if (spec.update_u && spec.update_v) {
    EXPECT_DOUBLE_EQ(spec.sigma_u, spec.sigma_v);
  }
  return sigma / plan.noise_multiplier;
}

// Removes the last user (per user) or one rating of the last user (per
// rating; `which` picks it) from `d`.
Data Neighbour(const Data& d, Granularity g, size_t which) {
  Data out = d;
  const int32_t last = d.users - 1;
  if (g == Granularity::kUser) {
    std::erase_if(out.ratings, [&](const data::Rating& r) { return r.user == last; });
    out.users = d.users - 1;
    return out;
  }
  std::vector<size_t> mine;
  for (size_t k = 0; k < d.ratings.size(); ++k) {
    if (d.ratings[k].user == last) mine.push_back(k);
  }
  out.ratings.erase(out.ratings.begin() + static_cast<std::ptrdiff_t>(mine[which % mine.size()]));
  return out;
}

struct Offered {
  Setting setting;
  Granularity granularity;
  double clip_norm = 0;  // JobConfig::clip_norm (HFL per-user clipping)
  // HFL: the validation split, U refits and Stage 3 of kAlternate run before
  // and between the releases, so both algorithms are measured; VFL's
  // kAlternate holds out its validation split before the releases too.
  Algorithm algorithm = Algorithm::kPaper;

  JobConfig Config() const {
    JobConfig c = Job(setting, granularity);
    c.clip_norm = clip_norm;
    c.algorithm = algorithm;
    return c;
  }
  std::string Name() const {
    return absl::StrCat(SettingName(setting), " per ", GranularityName(granularity), ", ",
                        AlgorithmName(algorithm),
                        clip_norm > 0 ? absl::StrCat(", clip ", clip_norm) : "");
  }
};

// A clip norm well below what a heavy user's whole gradient reaches, so the
// clipping binds in the adversarial cases.
constexpr double kClip = 7.0;

// Every private setting x granularity (x trimming or per-user clipping) that
// ValidateJobConfig accepts.
std::vector<Offered> OfferedCombinations() {
  std::vector<Offered> out;
  for (Setting s : {Setting::kVfl, Setting::kLocal, Setting::kHfl, Setting::kHflSynSgd}) {
    for (Granularity g : {Granularity::kRating, Granularity::kUser}) {
      for (double clip : {0.0, kClip}) {
        for (Algorithm a : {Algorithm::kPaper, Algorithm::kAlternate}) {
          const Offered o{s, g, clip, a};
          const bool hfl = s == Setting::kHfl || s == Setting::kHflSynSgd;
          // Clipping without effect (per rating) and the algorithm outside
          // HFL are not separate offers; the paper's algorithm is measured as
          // the paper has it (trimmed).
          if (!ValidateJobConfig(o.Config()).ok()) continue;
          if (clip > 0 && !o.Config().UserClipped()) continue;
          if (a == Algorithm::kAlternate && !hfl && s != Setting::kVfl) continue;
          if (a == Algorithm::kPaper && clip > 0) continue;
          out.push_back(o);
        }
      }
    }
  }
  return out;
}

TEST(SensitivityTest, EveryOfferedCombinationIsCovered) {
  const auto offered = OfferedCombinations();
  // VFL (paper and alternate, whose validation split is held out before the
  // releases) and DP local-only at both granularities; HFL and synSGD per
  // user: paper (trimmed), alternate trimmed, alternate clipped.
  EXPECT_EQ(offered.size(), 12u);
  for (const Offered& o : offered) {
    EXPECT_FALSE(o.granularity == Granularity::kRating &&
                 (o.setting == Setting::kHfl || o.setting == Setting::kHflSynSgd));
  }
}

TEST(SensitivityTest, PreNoiseReleaseMovesAtMostDelta) {
  random::Csprng rng = random::Csprng::FromSeed(2024);
  for (const Offered& o : OfferedCombinations()) {
    const JobConfig config = o.Config();
    ASSERT_OK_AND_ASSIGN(auto plan, PlanNoise(config));
    double worst_ratio = 0;
    double worst_count_ratio = 0;
    // heavy user: 1 (light), 40, 250 ratings; random or extreme values;
    // three kinds of shared matrix.
    for (int32_t heavy : {1, 40, 250}) {
      for (bool extreme : {false, true}) {
        for (int kind = 0; kind < 3; ++kind) {
          const Data d = RandomData(rng, 12, heavy, extreme);
          for (size_t which : {size_t{0}, size_t{7}}) {
            const Data n = Neighbour(d, o.granularity, which);
            const bool vertical = config.split == SplitKind::kVertical;
            const int32_t shared_rows = vertical ? d.users : kItems;
            random::Csprng srng = rng.Fork(absl::StrCat(heavy, extreme, kind));
            const mf::Matrix initial = Shared(shared_rows, kind == 2 ? 0 : kind, srng);
            const mf::Matrix shared = Shared(shared_rows, kind, srng);
            dp::PrivacyLedger l1(10, 1e-5), l2(10, 1e-5);
            Release a = RunParty(config, plan, d, initial, shared, &l1);
            Release b = RunParty(config, plan, n, initial, shared, &l2);
            const double delta = PlannedDelta(*a.session, plan);
            const double moved = ReleaseDistance(a.grad, b.grad);
            worst_ratio = std::max(worst_ratio, moved / delta);
            EXPECT_LE(moved, delta * (1 + 1e-9))
                << o.Name() << ": heavy " << heavy << " extreme " << extreme << " shared kind "
                << kind << " moved " << moved << " > Delta " << delta;
            // The release is not trivially zero: the bound is exercised.
            EXPECT_GT(Norm2(a.grad.grad_v) + Norm2(a.grad.grad_u), 0);
            // The size release (normaliser, HFL weight): the count moves by at
            // most the sensitivity its noise was calibrated for, and it was
            // charged at the count's z under its own ledger key.
            const double count_delta = plan.count_sigma / plan.count_noise_multiplier;
            const double count_moved = std::abs(
                static_cast<double>(a.session->PreNoiseCount() - b.session->PreNoiseCount()));
            worst_count_ratio = std::max(worst_count_ratio, count_moved / count_delta);
            EXPECT_LE(count_moved, count_delta)
                << o.Name() << ": heavy " << heavy << " count moved " << count_moved;
            ASSERT_TRUE(a.session->released_count().has_value());
            EXPECT_GE(*a.session->released_count(), 1.0);
            bool charged = false;
            for (const dp::LedgerEntry& e : l1.entries()) {
              if (e.round == CountReleaseRound(config)) {
                charged = e.sample_rate == 1.0 && e.steps == 1 &&
                          e.noise_multiplier == plan.count_noise_multiplier;
              }
            }
            EXPECT_TRUE(charged);
          }
        }
      }
    }
    // The adversarial cases come within a small factor of the bound, so the
    // comparison is not vacuous. (Per user the V-gradient of theta distinct
    // items is at most sqrt(theta) 2 R^{3/2}, below the theta 2 R^{3/2} used.)
    // Clipped, a heavy user's whole gradient exceeds C and is scaled to it.
    const double reached =
        o.clip_norm > 0 ? 0.99 : (o.granularity == Granularity::kRating ? 0.5 : 0.1);
    EXPECT_GT(worst_ratio, reached) << o.Name();
    // The heavy user (>= theta ratings; clipped: any user) moves the count by
    // exactly its bound.
    EXPECT_EQ(worst_count_ratio, 1.0) << o.Name();
  }
}

// Documentation of the refusal: per rating, HFL's release moves by more than
// the 2 R^{3/2} the FMF paper gives it, because Stage 1 fits u_i (noise-free)
// to all of user i's ratings and u_i enters the gradient of every item the
// user rated. (Measured through a per-user job's session, with trimming
// disabled by theta >= the heavy user's count, since a per-rating HFL job
// cannot be created.)
TEST(SensitivityTest, HflPerRatingWouldExceedTheAssumedDelta) {
  JobConfig rating = Job(Setting::kHfl, Granularity::kRating);
  EXPECT_THAT(ValidateJobConfig(rating), StatusIs(absl::StatusCode::kInvalidArgument));
  const double assumed = mf::SensitivityOneMatrix(kR);  // 2 R^{3/2} = 22.36
  EXPECT_NEAR(assumed, 22.36, 0.01);

  JobConfig config = Job(Setting::kHfl, Granularity::kUser);
  config.algorithm = Algorithm::kPaper;  // the paper's per-rating claim
  config.theta = 1000;                   // no trimming: the rating-level data as is
  config.pretrain_epochs = 20;           // the default Stage 1
  ASSERT_OK_AND_ASSIGN(auto plan, PlanNoise(config));
  // The server's V (it chooses V0 and every shared V): item 0's row at the
  // top of the ball, every other row zero. The user rates everything R.
  // With item 0's rating, Stage 1 pulls u_i towards R/sqrt(R) e1; without
  // it, only the ridge term acts and u_i decays. u_i then multiplies the
  // gradient -2 (x - <u_i, v_j>) u_i = -2 R u_i of EVERY other item j.
  mf::Matrix v(kItems, kDim);
  v.setZero();
  v(0, 0) = std::sqrt(kR);
  std::vector<double> moved_by;
  for (int32_t heavy : {2, 50, 200}) {
    Data d;
    d.users = 1;
    for (int32_t k = 0; k < heavy; ++k) d.ratings.push_back({0, k, static_cast<float>(kR)});
    const Data n = Neighbour(d, Granularity::kRating, 0);  // drops the rating of item 0
    dp::PrivacyLedger l1(10, 1e-5), l2(10, 1e-5);
    Release a = RunParty(config, plan, d, v, v, &l1);
    Release b = RunParty(config, plan, n, v, v, &l2);
    moved_by.push_back(ReleaseDistance(a.grad, b.grad));
  }
  // A user with 2 ratings stays (barely) inside; 50 and 200 ratings do not,
  // and the excess grows like sqrt(#ratings).
  EXPECT_GT(moved_by[1], assumed) << moved_by[1];
  EXPECT_GT(moved_by[2], 3 * assumed) << moved_by[2];
  EXPECT_GT(moved_by[2], moved_by[1]);
  std::printf(
      "HFL per rating, one rating removed: |dG| = %.2f (2 ratings), %.2f (50), %.2f (200) "
      "against 2R^{3/2} = %.2f\n",
      moved_by[0], moved_by[1], moved_by[2], assumed);
}

}  // namespace
}  // namespace fedmf::fmf
