// Empirical sensitivity of algorithm stats (docs/privacy.md, section stats):
// one party's pre-noise release (stats::ReleaseStatistics with the options
// the job's parties use, ReleaseFitOptions / ReleaseStatsOptions) moves by
// at most the Delta PlanStatistics gives the accountant, between
// neighbouring datasets — random ones and searched worst cases (heavy and
// single-rating rows, ratings at the ends of the range, public models with
// extreme or garbage biases and factors, as a hostile server could send).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "common/fmf/stats_federation.h"
#include "common/fmf/stats_plan.h"
#include "common/fmf/stats_release.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::StatusIs;

namespace fedmf::fmf {
namespace {

constexpr int32_t kCols = 307;
constexpr double kMin = 1, kMax = 5;

JobConfig StatsJob(Setting setting, Granularity granularity) {
  JobConfig c;
  c.setting = setting;
  c.split = setting == Setting::kVfl ? SplitKind::kVertical : SplitKind::kHorizontal;
  c.granularity = granularity;
  c.algorithm = Algorithm::kStatistics;
  c.stats.dim = 4;
  c.seed = 1;
  return c;
}

double Distance(const stats::Statistics& a, const stats::Statistics& b) {
  double sq = 0;
  for (size_t i = 0; i < a.values.size(); ++i) {
    sq += (a.values[i] - b.values[i]) * (a.values[i] - b.values[i]);
  }
  return std::sqrt(sq);
}

// Public models a server might send: honest-looking, extreme, garbage.
std::vector<stats::PublicModel> Models(int32_t dim, random::Csprng& rng) {
  std::vector<stats::PublicModel> out;
  for (double scale : {0.0, 0.3, 3.0, 1e3, 1e300}) {
    stats::PublicModel m = stats::EmptyPublicModel(kCols, dim, 0.5 * (kMin + kMax));
    for (int32_t c = 0; c < kCols; ++c) {
      for (int32_t a = 0; a <= dim; ++a) m.cols(c, a) = scale * (2 * rng.NextDouble() - 1);
    }
    out.push_back(m);
  }
  for (double bias : {-1e6, 2.0, -2.0}) {  // every target at a clamp
    stats::PublicModel m = stats::EmptyPublicModel(kCols, dim, 0.5 * (kMin + kMax));
    m.cols.col(dim).setConstant(bias);
    out.push_back(m);
  }
  return out;
}

// Rows with `counts[r]` ratings each, values at the ends of the range or
// random.
std::vector<data::Rating> RowsData(const std::vector<int32_t>& counts, random::Csprng& rng,
                                   int mode) {
  std::vector<data::Rating> out;
  for (int32_t r = 0; r < static_cast<int32_t>(counts.size()); ++r) {
    for (int32_t k = 0; k < counts[r]; ++k) {
      float v = mode == 0   ? static_cast<float>(kMin + rng.UniformInt(5))
                : mode == 1 ? static_cast<float>(kMax)
                            : static_cast<float>(k % 2 == 0 ? kMin : kMax);
      out.push_back({r, (k * 7 + r) % kCols, v});
    }
  }
  return out;
}

stats::Statistics Release(const std::vector<data::Rating>& ratings, int32_t rows,
                          const stats::PublicModel& model, const StatsConfig& sc, bool per_rating,
                          int32_t dim, std::vector<double>* norms = nullptr) {
  auto r = stats::MakeRows(ratings, rows, kCols, true);
  EXPECT_TRUE(r.ok());
  // As the party does (StatsPartySession::Release): the server's model
  // clipped first.
  auto sane = stats::SanitizePublicModel(model, kMax - kMin, 10);
  EXPECT_TRUE(sane.ok());
  return stats::ReleaseStatistics(*r, *sane, ReleaseFitOptions(sc),
                                  ReleaseStatsOptions(sc, per_rating, dim), norms);
}

// Per user (HFL): removing one row moves the release by at most row_clip,
// and a heavy row reaches it.
TEST(StatsSensitivityTest, PerUserReleaseMovesAtMostRowClip) {
  JobConfig job = StatsJob(Setting::kHfl, Granularity::kUser);
  job.stats.row_clip = 0.7;
  ASSERT_OK_AND_ASSIGN(StatsPlan plan, PlanStatistics(job, 10));
  random::Csprng rng = random::Csprng::FromSeed(7);
  double worst = 0;
  for (const StatsReleasePlan& release : plan.releases) {
    for (const stats::PublicModel& model : Models(job.stats.dim, rng)) {
      for (int mode = 0; mode < 3; ++mode) {
        for (int32_t last : {1, 3, 40, 200}) {
          std::vector<int32_t> counts = {5, 12, 1, 30, last};
          std::vector<data::Rating> with = RowsData(counts, rng, mode);
          std::vector<data::Rating> without;
          for (const data::Rating& r : with) {
            if (r.user != 4) without.push_back(r);
          }
          // The removed user's row stays in the index space (empty): only its
          // ratings go, as a neighbour without that user.
          const stats::Statistics a = Release(with, 5, model, job.stats, false, release.dim);
          const stats::Statistics b = Release(without, 5, model, job.stats, false, release.dim);
          const double moved = Distance(a, b);
          EXPECT_LE(moved, release.sensitivity * (1 + 1e-9))
              << "dim " << release.dim << " mode " << mode << " count " << last;
          worst = std::max(worst, moved);
        }
      }
    }
  }
  EXPECT_GE(worst, 0.99 * job.stats.row_clip);  // the bound is reached, not loose
}

// Per rating (dim 0: HFL item biases, VFL user biases): adding or removing
// one rating moves the release by at most RatingSensitivity — the rating's
// own count and residual, plus its row's bias moving every other residual
// of the row. The search walks row sizes around bias_l2 (where the bias
// shift term peaks), ratings at both ends and public biases that put every
// target at a clamp.
TEST(StatsSensitivityTest, PerRatingReleaseMovesAtMostItsDelta) {
  for (const Setting setting : {Setting::kHfl, Setting::kVfl}) {
    for (double bias_l2 : {0.0, 1.0, 5.0}) {
      JobConfig job = StatsJob(setting, Granularity::kRating);
      job.stats.bias_l2 = bias_l2;
      ASSERT_OK_AND_ASSIGN(StatsPlan plan, PlanStatistics(job, 3));
      ASSERT_EQ(plan.releases.size(), 1u);
      const double delta = plan.releases[0].sensitivity;
      EXPECT_NEAR(delta,
                  std::sqrt(1 + job.stats.residual_clip * job.stats.residual_clip +
                            job.stats.bias_clip * job.stats.bias_clip / (1 + bias_l2)),
                  1e-12);
      random::Csprng rng = random::Csprng::FromSeed(11);
      double worst = 0;
      for (const stats::PublicModel& model : Models(0, rng)) {
        for (int mode = 0; mode < 3; ++mode) {
          for (int32_t n = 0; n <= 39; ++n) {
            std::vector<data::Rating> base = RowsData({3, n, 8}, rng, mode);
            for (float v : {static_cast<float>(kMin), static_cast<float>(kMax)}) {
              // Row 1 gets one more rating on a column it has not rated.
              std::vector<data::Rating> plus = base;
              plus.push_back({1, 306, v});
              bool duplicate = false;
              for (const data::Rating& r : base) {
                duplicate |= r.user == 1 && r.item == plus.back().item;
              }
              if (duplicate) continue;
              const double moved = Distance(Release(base, 3, model, job.stats, true, 0),
                                            Release(plus, 3, model, job.stats, true, 0));
              EXPECT_LE(moved, delta * (1 + 1e-9)) << "n " << n << " mode " << mode;
              worst = std::max(worst, moved);
            }
          }
        }
      }
      // The rating's own count and clamped residual are always there.
      EXPECT_GE(worst, std::sqrt(1 + job.stats.residual_clip * job.stats.residual_clip) * 0.99);
    }
  }
}

// A model with a non-finite number is refused, not fitted against.
TEST(StatsSensitivityTest, NonFinitePublicModelsAreRefused) {
  stats::PublicModel m = stats::EmptyPublicModel(3, 2, 3);
  m.cols(1, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(stats::SanitizePublicModel(m, 4, 10), StatusIs(absl::StatusCode::kInvalidArgument));
  m.cols(1, 0) = std::numeric_limits<double>::infinity();
  EXPECT_THAT(stats::SanitizePublicModel(m, 4, 10), StatusIs(absl::StatusCode::kInvalidArgument));
  m.cols(1, 0) = 1e300;
  m.cols(2, 2) = -1e300;
  ASSERT_OK_AND_ASSIGN(auto sane, stats::SanitizePublicModel(m, 4, 10));
  EXPECT_NEAR(sane.cols.row(1).head(2).norm(), 10, 1e-9);
  EXPECT_EQ(sane.cols(2, 2), -4);
}

// The per-rating analysis assumes one rating changes nothing else about the
// party's data: the validation split is decided per rating.
TEST(StatsSensitivityTest, HoldOutDependsOnTheRatingAlone) {
  random::Csprng rng = random::Csprng::FromSeed(3);
  std::vector<data::Rating> all = RowsData({20, 30, 40}, rng, 0);
  std::vector<data::Rating> fewer(all.begin() + 1, all.end());
  std::vector<data::Rating> a = all, b = fewer;
  const std::vector<data::Rating> held_a = HoldOutByRatingHash(a, 0.3, 99);
  const std::vector<data::Rating> held_b = HoldOutByRatingHash(b, 0.3, 99);
  std::vector<data::Rating> held_a_rest;
  for (const data::Rating& r : held_a) {
    if (!(r == all[0])) held_a_rest.push_back(r);
  }
  EXPECT_EQ(held_a_rest, held_b);
  EXPECT_GT(held_a.size(), 5u);
  EXPECT_EQ(a.size() + held_a.size(), all.size());
}

}  // namespace
}  // namespace fedmf::fmf
