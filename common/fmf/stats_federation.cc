#include "common/fmf/stats_federation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/fmf/stats_plan.h"
#include "common/fmf/stats_release.h"
#include "common/fmf/stats_session.h"
#include "common/lfl/secagg_sum.h"
#include "common/lfl/secure_sum.h"
#include "common/mf/metrics.h"
#include "common/mf/ranking.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// AdaptiveFactorReleases: at most this many factor releases, each kept only
// while the median column's noisy weighted count is at least this many noise
// sigmas of a factor release (ML-100K's validation ratings chose 1 factor
// release at epsilon 16, 2-3 at 64 and 3-5 at 256,
// docs/archive/results-2026.md section stats; this ratio reproduces those choices).
constexpr int32_t kMaxFactorReleases = 5;
constexpr double kReleaseSignalToNoise = 6;

// The parties' noisy releases summed by secure aggregation among them: each
// party's vector in 64-bit fixed point (the most fractional bits that keep s
// values of magnitude <= largest from wrapping), masked; the server learns
// the sum only. Every party must stay (silos: min_survivors = s).
absl::StatusOr<std::vector<double>> SecureSum(const std::vector<stats::Statistics>& shares,
                                              int32_t release, double largest,
                                              const lfl::SecureSumFn& secagg) {
  const size_t s = shares.size();
  ASSIGN_OR_RETURN(crypto::FixedPointCodec codec, lfl::MaxPrecisionCodec(64, largest, s));
  lfl::SecureSumRequest request;
  request.iteration = release;
  request.round = 1;
  request.min_survivors = static_cast<int64_t>(s);
  request.codec = &codec;
  request.drops.assign(s, lfl::DropPoint::kNone);
  std::vector<const std::vector<double>*> inputs;
  for (const stats::Statistics& share : shares) inputs.push_back(&share.values);
  lfl::UseInputVectors(request, inputs);
  ASSIGN_OR_RETURN(lfl::SecureSumOutcome outcome, secagg(request));
  if (outcome.aborted) {
    return absl::UnavailableError(absl::StrCat("secure aggregation of release ", release,
                                               " aborted: ", outcome.abort_reason));
  }
  return std::move(outcome.sum);
}

}  // namespace

stats::FitOptions ReleaseFitOptions(const StatsConfig& sc) {
  stats::FitOptions f;
  f.factor_l2 = sc.factor_l2;
  f.bias_l2 = sc.bias_l2;
  f.bias_clip = sc.bias_clip;
  f.factor_norm = sc.factor_norm;
  return f;
}

stats::StatsOptions ReleaseStatsOptions(const StatsConfig& sc, bool per_rating, int32_t dim) {
  stats::StatsOptions so;
  so.dim = dim;
  so.weighting = per_rating ? stats::Weighting::kPerRating : stats::Weighting::kPerRow;
  so.residual_clip = sc.residual_clip;
  so.row_clip = sc.row_clip;
  return so;
}

absl::StatusOr<int32_t> AdaptiveFactorReleases(const JobConfig& config, int32_t parties,
                                               const stats::Statistics& bias_sum) {
  if (bias_sum.dim != 0 || bias_sum.num_cols < 1) {
    return absl::InvalidArgumentError("the bias release is a dimension-0 release");
  }
  std::vector<double> counts;
  const int32_t width = stats::StatsWidth(0);
  for (int32_t c = 0; c < bias_sum.num_cols; ++c) {
    counts.push_back(bias_sum.values[static_cast<size_t>(c) * width]);
  }
  std::nth_element(counts.begin(), counts.begin() + counts.size() / 2, counts.end());
  const double median = counts[counts.size() / 2];
  for (int32_t t = kMaxFactorReleases; t > 1; --t) {
    JobConfig c = config;
    c.stats.factor_releases = t;
    ASSIGN_OR_RETURN(StatsPlan plan, PlanStatistics(c, parties));
    if (median >= kReleaseSignalToNoise * plan.releases.back().sum_sigma) return t;
  }
  return 1;
}

std::vector<data::Rating> HoldOutByRatingHash(std::vector<data::Rating>& train, double fraction,
                                              uint64_t key) {
  std::vector<data::Rating> held, kept;
  if (!(fraction > 0)) return held;
  for (const data::Rating& r : train) {
    const uint64_t id = (static_cast<uint64_t>(static_cast<uint32_t>(r.user)) << 32) |
                        static_cast<uint32_t>(r.item);
    const double u = static_cast<double>(SplitMix64(key ^ SplitMix64(id)) >> 11) * 0x1.0p-53;
    (u < fraction ? held : kept).push_back(r);
  }
  train = std::move(kept);
  return held;
}

absl::StatusOr<SimulationResult> SimulateStatistics(const JobConfig& config,
                                                    data::Federation federation) {
  const auto start = std::chrono::steady_clock::now();
  const int32_t s = static_cast<int32_t>(federation.parties.size());
  if (s == 0) return absl::InvalidArgumentError("federation has no parties");
  const bool by_user = config.split == SplitKind::kHorizontal;
  const double centre = 0.5 * (federation.range.min + federation.range.max);
  const int32_t num_cols = by_user ? federation.num_items : federation.num_users;
  random::Csprng root = random::Csprng::FromOptionalSeed(config.seed);

  // The roles (stats_session.h), exchanging what the daemons will carry.
  ASSIGN_OR_RETURN(StatsServerSession server,
                   StatsServerSession::Create(config, s, num_cols, centre, root.Fork("public")));
  std::vector<std::unique_ptr<StatsPartySession>> parties;
  std::vector<int32_t> party_ids;
  for (int32_t k = 0; k < s; ++k) {
    party_ids.push_back(federation.parties[k].party);
    ASSIGN_OR_RETURN(auto party,
                     StatsPartySession::Create(config, std::move(federation.parties[k]), num_cols,
                                               centre, root.Fork(absl::StrCat("party-", k))));
    parties.push_back(std::move(party));
  }
  lfl::SecAggSumOptions secagg_options;
  secagg_options.graph = secagg::GraphKind::kComplete;
  secagg_options.active = true;
  secagg_options.requirements.dropout_rate = 0;
  lfl::SecureSumFn secagg = lfl::MakeSecAggSum(secagg_options, root.Fork("secagg"));

  // The releases: every party fits its rows against the public model and
  // adds its noise share to its statistics; the sum is solved into the next
  // public model.
  while (!server.done()) {
    const int32_t t = server.release();
    const StatsReleasePlan release = server.current();
    const bool per_rating = server.plan().per_rating;
    std::vector<stats::Statistics> shares;
    double largest = 0;  // the largest |value| any party can send (public)
    for (auto& party : parties) {
      ASSIGN_OR_RETURN(stats::Statistics share,
                       party->Release(t, release, per_rating, server.model()));
      shares.push_back(std::move(share));
      largest = std::max(largest, party->MaxAbs(release, per_rating));
    }
    stats::Statistics sum = stats::ZeroStatistics(num_cols, release.dim);
    if (config.stats.secure_aggregation && s > 1) {
      ASSIGN_OR_RETURN(sum.values, SecureSum(shares, t, largest, secagg));
    } else {
      for (const stats::Statistics& share : shares) stats::AddInto(sum, share);
    }
    RETURN_IF_ERROR(server.Close(sum));
  }

  // Each party's own model from the last sum and the final public model.
  SimulationResult result;
  result.config = config;
  result.stats_plan = server.plan();
  result.rounds = static_cast<int32_t>(server.plan().releases.size());
  std::vector<mf::ErrorMetrics> tests, trains, validations;
  std::vector<mf::RankingMetrics> rankings, popularities, by_prediction;
  for (int32_t k = 0; k < s; ++k) {
    RETURN_IF_ERROR(parties[k]->Finish(server.last_sum(), server.model(), server.plan()));
    PartyResult r = parties[k]->TakeResult(party_ids[k], server.plan().epsilon, result.rounds);
    result.epsilon = std::max(result.epsilon, r.epsilon);
    rankings.push_back(r.ranking);
    popularities.push_back(r.popularity);
    by_prediction.push_back(r.ranking_by_prediction);
    tests.push_back(r.test);
    trains.push_back(r.train);
    if (r.validation.count > 0) validations.push_back(r.validation);
    result.parties.push_back(std::move(r));
  }
  result.test = mf::Combine(tests);
  result.train = mf::Combine(trains);
  if (!validations.empty()) result.validation = mf::Combine(validations);
  result.ranking = mf::CombineRanking(rankings);
  result.popularity = mf::CombineRanking(popularities);
  result.ranking_by_prediction = mf::CombineRanking(by_prediction);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace fedmf::fmf
