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
#include "common/lfl/secagg_sum.h"
#include "common/lfl/secure_sum.h"
#include "common/mf/metrics.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The random start of factors (public model and a party's own model): entries
// N(0, 1/dim), so a factor has norm ~1.
double FactorScale(int32_t dim) { return 1 / std::sqrt(static_cast<double>(dim)); }

struct Party {
  bool by_user = true;
  data::RatingRange range;
  std::vector<data::Rating> fit_ratings, validation, test, all_train;
  stats::Rows fit_rows, all_rows;
  random::Csprng rng = random::Csprng::FromSeed(0);
  stats::Statistics last_noisy;  // its noisy share of the last release
  int32_t users = 0, items = 0;
};

// The party's model's errors on `ratings` (predictions clamped to the range).
mf::ErrorMetrics Evaluate(const stats::PartyModel& model, const std::vector<data::Rating>& ratings,
                          bool by_user, const data::RatingRange& range) {
  return mf::EvaluateWith(ratings, [&](const data::Rating& r) {
    const double p = by_user ? model.Predict(r.user, r.item) : model.Predict(r.item, r.user);
    return std::clamp(p, range.min, range.max);
  });
}

// Row and column embeddings whose dot product is the model's prediction:
// [f, b_r, 1, 1] . [g, 1, b_c, mu0].
std::pair<mf::Matrix, mf::Matrix> Embeddings(const stats::PartyModel& m) {
  const Eigen::Index d = m.rows.cols() - 1;
  mf::Matrix rows(m.rows.rows(), d + 3), cols(m.cols.rows(), d + 3);
  for (Eigen::Index r = 0; r < m.rows.rows(); ++r) {
    rows.row(r).head(d) = m.rows.row(r).head(d);
    rows(r, d) = m.rows(r, d);
    rows(r, d + 1) = 1;
    rows(r, d + 2) = 1;
  }
  for (Eigen::Index c = 0; c < m.cols.rows(); ++c) {
    cols.row(c).head(d) = m.cols.row(c).head(d);
    cols(c, d) = 1;
    cols(c, d + 1) = m.cols(c, d);
    cols(c, d + 2) = m.centre;
  }
  return {rows, cols};
}

// Squared errors of the party's model on `ratings`, predictions clamped.
std::vector<double> SquaredErrors(const stats::PartyModel& model,
                                  const std::vector<data::Rating>& ratings, bool by_user,
                                  const data::RatingRange& range) {
  std::vector<double> out;
  out.reserve(ratings.size());
  for (const data::Rating& r : ratings) {
    const double p =
        std::clamp(by_user ? model.Predict(r.user, r.item) : model.Predict(r.item, r.user),
                   range.min, range.max);
    out.push_back((r.value - p) * (r.value - p));
  }
  return out;
}

// How many standard errors of the paired difference a fused model must beat
// the party's own by on its validation ratings (chosen on ML-100K's
// validation splits at epsilon 1, where a plain minimum often picked a fused
// model that was worse on the party's test ratings).
constexpr double kChoiceMarginSe = 2.0;

// ALS iterations of the party's own model from its random start (the fused
// models start from the public model and run StatsConfig::fusion_iterations):
// on synthetic rank-5 ratings 5 iterations left it far from a fit (test MSE
// 0.744 against 0.667 with 15, 600 users in 3 parties).
constexpr int32_t kOwnIterations = 15;

// The candidate's mean squared error is below the own model's by more than
// kChoiceMarginSe standard errors of the mean per-rating difference. The
// standard error is clustered by column (HFL item, VFL user): a noisy
// column parameter errs on all of that column's ratings at once, so the
// ratings are not independent draws.
bool ClearlyBetter(const std::vector<double>& candidate, const std::vector<double>& own,
                   const std::vector<data::Rating>& ratings, bool by_user) {
  const size_t n = candidate.size();
  if (n < 2 || own.size() != n || ratings.size() != n) return false;
  double mean = 0;
  absl::flat_hash_map<int32_t, std::pair<double, int64_t>> clusters;  // sum, count
  for (size_t i = 0; i < n; ++i) {
    const double d = candidate[i] - own[i];
    mean += d;
    auto& c = clusters[by_user ? ratings[i].item : ratings[i].user];
    c.first += d;
    c.second += 1;
  }
  mean /= static_cast<double>(n);
  const double g = static_cast<double>(clusters.size());
  if (g < 2) return false;
  double sq = 0;
  for (const auto& [col, c] : clusters) {
    const double r = c.first - static_cast<double>(c.second) * mean;
    sq += r * r;
  }
  const double se = std::sqrt(g / (g - 1) * sq) / static_cast<double>(n);
  return mean + kChoiceMarginSe * se < 0;
}

// AdaptiveFactorReleases: at most this many factor releases, each kept only
// while the median column's noisy weighted count is at least this many noise
// sigmas of a factor release (ML-100K's validation ratings chose 1 factor
// release at epsilon 16, 2-3 at 64 and 3-5 at 256, docs/results.md section
// stats; this ratio reproduces those choices).
constexpr int32_t kMaxFactorReleases = 5;
constexpr double kReleaseSignalToNoise = 6;

// The parties' noisy releases summed by secure aggregation among them: each
// party's vector in 64-bit fixed point (the most fractional bits that keep s
// values of magnitude <= largest from wrapping), masked; the server learns
// the sum only. Every party must stay (silos: min_survivors = s).
absl::StatusOr<std::vector<double>> SecureSum(const std::vector<Party>& parties, int32_t release,
                                              double largest, const lfl::SecureSumFn& secagg) {
  const size_t s = parties.size();
  ASSIGN_OR_RETURN(crypto::FixedPointCodec codec, lfl::MaxPrecisionCodec(64, largest, s));
  lfl::SecureSumRequest request;
  request.iteration = release;
  request.round = 1;
  request.min_survivors = static_cast<int64_t>(s);
  request.codec = &codec;
  request.drops.assign(s, lfl::DropPoint::kNone);
  std::vector<const std::vector<double>*> inputs;
  for (const Party& p : parties) inputs.push_back(&p.last_noisy.values);
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
  // Per user with a bias release and factor_releases 0, the number of factor
  // releases is chosen after the bias release (AdaptiveFactorReleases); the
  // bias release's noise does not depend on it.
  const bool adaptive = config.granularity == Granularity::kUser &&
                        config.stats.factor_releases == 0 && config.stats.bias_release &&
                        config.private_training();
  JobConfig first = config;
  if (adaptive) first.stats.factor_releases = 1;
  ASSIGN_OR_RETURN(StatsPlan plan, PlanStatistics(first, s));
  const StatsConfig& sc = config.stats;
  const bool by_user = config.split == SplitKind::kHorizontal;
  const double centre = 0.5 * (federation.range.min + federation.range.max);
  const int32_t num_cols = by_user ? federation.num_items : federation.num_users;
  random::Csprng root = random::Csprng::FromOptionalSeed(config.seed);

  std::vector<Party> parties(s);
  for (int32_t k = 0; k < s; ++k) {
    data::PartyData& data = federation.parties[k];
    Party& p = parties[k];
    p.by_user = by_user;
    p.range = data.range;
    p.users = data.num_users();
    p.items = data.num_items();
    p.rng = root.Fork(absl::StrCat("party-", k));
    p.all_train = data.train;
    p.fit_ratings = std::move(data.train);
    p.validation = HoldOutByRatingHash(p.fit_ratings, config.validation_fraction,
                                       p.rng.Fork("validation").NextU64());
    p.test = std::move(data.test);
    ASSIGN_OR_RETURN(p.fit_rows, stats::MakeRows(p.fit_ratings, p.users, p.items, by_user));
    ASSIGN_OR_RETURN(p.all_rows, stats::MakeRows(p.all_train, p.users, p.items, by_user));
    if (p.fit_rows.num_cols != num_cols) {
      return absl::InvalidArgumentError(absl::StrCat("party ", k, " has ", p.fit_rows.num_cols,
                                                     " shared columns, the federation ", num_cols));
    }
  }

  // The releases: every party fits its rows against the public model, adds
  // its noise share to its statistics; the sum is solved into the next
  // public model.
  stats::PublicModel model = stats::EmptyPublicModel(num_cols, 0, centre);
  lfl::SecAggSumOptions secagg_options;
  secagg_options.graph = secagg::GraphKind::kComplete;
  secagg_options.active = true;
  secagg_options.requirements.dropout_rate = 0;
  lfl::SecureSumFn secagg = lfl::MakeSecAggSum(secagg_options, root.Fork("secagg"));
  random::Csprng public_rng = root.Fork("public");
  const stats::FitOptions fit = ReleaseFitOptions(sc);
  stats::Statistics sum;
  for (size_t t = 0; t < plan.releases.size(); ++t) {
    const StatsReleasePlan& release = plan.releases[t];
    if (release.dim > model.dim) {
      model = stats::WithFactors(model, release.dim, FactorScale(release.dim), public_rng);
    }
    const stats::StatsOptions so = ReleaseStatsOptions(sc, plan.per_rating, release.dim);
    sum = stats::ZeroStatistics(num_cols, release.dim);
    double largest = 0;  // the largest |value| any party can send (public)
    for (int32_t k = 0; k < s; ++k) {
      Party& p = parties[k];
      p.last_noisy = stats::ReleaseStatistics(p.fit_rows, model, fit, so);
      random::Csprng noise = p.rng.Fork(absl::StrCat("noise/", t));
      const double bound = stats::MagnitudeBound(so, p.fit_rows.num_rows);
      stats::AddSnappedNoise(p.last_noisy, release.share_sigma, bound, noise);
      largest = std::max(largest, bound + (release.share_sigma > 0 ? 64 * release.share_sigma : 0));
    }
    if (sc.secure_aggregation && s > 1) {
      ASSIGN_OR_RETURN(sum.values, SecureSum(parties, static_cast<int32_t>(t), largest, secagg));
    } else {
      for (const Party& p : parties) stats::AddInto(sum, p.last_noisy);
    }
    stats::SolveOptions solve;
    solve.factor_l2 = sc.public_factor_l2;
    solve.bias_l2 = sc.col_bias_l2;
    solve.noise_ridge = sc.noise_ridge;
    solve.sigma = release.sum_sigma;
    solve.min_count = sc.min_count_sigmas * release.sum_sigma;
    model = stats::SolvePublic(sum, model, solve);
    if (t == 0 && adaptive) {
      // The bias release is public now: it decides how many factor releases
      // the rest of the budget is split into (a GDP filter: the mu_t^2 still
      // sum to mu^2, Smith and Thakurta 2022).
      JobConfig chosen = config;
      ASSIGN_OR_RETURN(chosen.stats.factor_releases, AdaptiveFactorReleases(config, s, sum));
      ASSIGN_OR_RETURN(plan, PlanStatistics(chosen, s));
    }
  }

  // Each party's own model: its data alone, or fused with the others'
  // statistics of the last release, chosen on its validation ratings, then
  // refit on all of its training ratings.
  SimulationResult result;
  result.config = config;
  result.stats_plan = plan;
  result.rounds = static_cast<int32_t>(plan.releases.size());
  std::vector<mf::ErrorMetrics> tests, trains, validations;
  for (int32_t k = 0; k < s; ++k) {
    Party& p = parties[k];
    stats::Statistics others = sum;
    stats::SubtractFrom(others, p.last_noisy);
    random::Csprng own_rng = p.rng.Fork("own-start");
    const stats::PublicModel own_start = stats::WithFactors(
        stats::EmptyPublicModel(num_cols, 0, centre), sc.dim, FactorScale(sc.dim), own_rng);
    random::Csprng fused_rng = p.rng.Fork("fused-start");
    const stats::PublicModel fused_start =
        model.dim >= sc.dim ? model
                            : stats::WithFactors(model, sc.dim, FactorScale(sc.dim), fused_rng);
    // Others' statistics per rating of the party's own scale: the release
    // weighs a rating 1/sqrt(n_r) per row (1 per rating).
    double base = 1;
    if (!plan.per_rating) {
      double weight = 0;
      for (int32_t r = 0; r < p.fit_rows.num_rows; ++r) {
        weight += std::sqrt(static_cast<double>(p.fit_rows.RowSize(r)));
      }
      base = weight > 0 ? static_cast<double>(p.fit_rows.nnz()) / weight : 1;
    }
    stats::FusionOptions fo;
    fo.dim = sc.dim;
    fo.others_sigma = plan.releases.back().others_sigma;
    fo.noise_ridge = sc.noise_ridge;
    fo.fit.factor_l2 = sc.factor_l2;
    fo.fit.bias_l2 = sc.col_bias_l2;
    fo.fit.bias_clip = p.range.max - p.range.min;
    fo.fit.factor_norm = 0;
    fo.col_factor_l2 = sc.factor_l2;
    fo.col_bias_l2 = sc.col_bias_l2;
    fo.iterations = sc.fusion_iterations;
    // The party's own model: its data alone from its own random start (what
    // it would do alone), at the ridge its validation ratings prefer, with
    // kOwnIterations ALS iterations. Fused models start from the public
    // model and add the others' statistics at weight w * base, at the job's
    // ridge, and the best weight is tried at the smaller ridges too. A fused
    // model replaces the party's own only if it is better on the validation
    // ratings by more than kChoiceMarginSe standard errors of the paired
    // difference: a party does not trade its own model for a noisy one on a
    // validation draw.
    struct Choice {
      double weight = -1;  // < 0: own
      double l2 = 0;
      int32_t iterations = 0;
    };
    auto options_for = [&](const Choice& c) {
      stats::FusionOptions o = fo;
      o.others_weight = c.weight < 0 ? 0 : c.weight * base;
      o.fit.factor_l2 = c.l2;
      o.col_factor_l2 = c.l2;
      o.iterations = c.iterations;
      return o;
    };
    auto fit = [&](const stats::Rows& rows, const Choice& c) {
      return stats::FitPartyModel(rows, &others, c.weight < 0 ? own_start : fused_start,
                                  options_for(c));
    };
    auto validate = [&](const Choice& c, std::vector<double>& errors) {
      errors = SquaredErrors(fit(p.fit_rows, c), p.validation, by_user, p.range);
      double mse = 0;
      for (double e : errors) mse += e;
      return mse / static_cast<double>(std::max<size_t>(errors.size(), 1));
    };
    const std::vector<double> ridges = {sc.factor_l2 / 10, sc.factor_l2 / 4, sc.factor_l2};
    std::vector<double> own_errors, errors;
    double best_mse = std::numeric_limits<double>::infinity();
    Choice best;
    for (double l2 : ridges) {
      const Choice c{-1, l2, std::max(sc.fusion_iterations, kOwnIterations)};
      const double mse = validate(c, errors);
      if (mse < best_mse) {
        best_mse = mse;
        best = c;
        own_errors = errors;
      }
    }
    // The best fused model on validation: its weight at the job's ridge,
    // then that weight at the smaller ridges.
    Choice fused;
    double fused_mse = std::numeric_limits<double>::infinity();
    std::vector<double> fused_errors;
    auto consider = [&](const Choice& c) {
      const double mse = validate(c, errors);
      if (mse < fused_mse) {
        fused_mse = mse;
        fused = c;
        fused_errors = errors;
      }
    };
    for (double w : sc.others_weights) consider({w, sc.factor_l2, sc.fusion_iterations});
    const double w = fused.weight;
    for (double l2 : ridges) {
      if (l2 != sc.factor_l2) consider({w, l2, sc.fusion_iterations});
    }
    if (fused_mse < best_mse && ClearlyBetter(fused_errors, own_errors, p.validation, by_user)) {
      best_mse = fused_mse;
      best = fused;
    }
    const stats::FusionOptions chosen = options_for(best);
    const stats::PartyModel final_model = fit(p.all_rows, best);
    const double best_weight = best.weight;

    PartyResult r;
    r.party = federation.parties[k].party;
    r.users = p.users;
    r.items = p.items;
    r.train_ratings = static_cast<int64_t>(p.all_train.size());
    r.test = Evaluate(final_model, p.test, by_user, p.range);
    r.train = Evaluate(final_model, p.all_train, by_user, p.range);
    r.validation.mse = best_mse;
    r.validation.rmse = std::sqrt(best_mse);
    r.validation.count = static_cast<int64_t>(p.validation.size());
    r.epsilon = plan.epsilon;
    r.steps = static_cast<int64_t>(plan.releases.size());
    r.model_kind = best_weight < 0 ? "own" : "federated";
    r.others_weight = chosen.others_weight;
    auto [row_emb, col_emb] = Embeddings(final_model);
    r.user_embeddings = by_user ? std::move(row_emb) : std::move(col_emb);
    r.item_embeddings = by_user ? std::move(col_emb) : std::move(row_emb);
    result.epsilon = std::max(result.epsilon, r.epsilon);
    tests.push_back(r.test);
    trains.push_back(r.train);
    if (r.validation.count > 0) validations.push_back(r.validation);
    result.parties.push_back(std::move(r));
  }
  result.test = mf::Combine(tests);
  result.train = mf::Combine(trains);
  if (!validations.empty()) result.validation = mf::Combine(validations);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace fedmf::fmf
