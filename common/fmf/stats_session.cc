#include "common/fmf/stats_session.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/fmf/stats_federation.h"
#include "common/mf/metrics.h"
#include "common/mf/ranking.h"

namespace fedmf::fmf {
namespace {

// The random start of factors (public model and a party's own model): entries
// N(0, 1/dim), so a factor has norm ~1.
double FactorScale(int32_t dim) { return 1 / std::sqrt(static_cast<double>(dim)); }

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

// Bounds a party puts on the public model before fitting against it: biases
// within this many rating-range widths, factors of norm at most this (an
// honest public model's are about 1).
constexpr double kPublicBiasBound = 1;
constexpr double kPublicFactorBound = 10;

// The party's model's errors on `ratings` (predictions clamped to the range).
mf::ErrorMetrics Evaluate(const stats::PartyModel& model, const std::vector<data::Rating>& ratings,
                          bool by_user, const data::RatingRange& range) {
  return mf::EvaluateWith(ratings, [&](const data::Rating& r) {
    const double p = by_user ? model.Predict(r.user, r.item) : model.Predict(r.item, r.user);
    return std::clamp(p, range.min, range.max);
  });
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

}  // namespace

// ---------------------------------------------------------------- server

StatsServerSession::StatsServerSession(JobConfig config, int32_t parties, StatsPlan plan,
                                       stats::PublicModel model, random::Csprng public_rng,
                                       bool adaptive)
    : config_(std::move(config)),
      parties_(parties),
      plan_(std::move(plan)),
      model_(std::move(model)),
      public_rng_(std::move(public_rng)),
      adaptive_(adaptive) {}

absl::StatusOr<StatsServerSession> StatsServerSession::Create(const JobConfig& config,
                                                              int32_t parties, int32_t num_cols,
                                                              double centre,
                                                              random::Csprng public_rng) {
  if (num_cols < 1) return absl::InvalidArgumentError("a stats job needs at least one column");
  // Per user with a bias release and factor_releases 0, the number of factor
  // releases is chosen after the bias release (AdaptiveFactorReleases); the
  // bias release's noise does not depend on it.
  const bool adaptive = config.granularity == Granularity::kUser &&
                        config.stats.factor_releases == 0 && config.stats.bias_release &&
                        config.private_training();
  JobConfig first = config;
  if (adaptive) first.stats.factor_releases = 1;
  ASSIGN_OR_RETURN(StatsPlan plan, PlanStatistics(first, parties));
  StatsServerSession s(config, parties, std::move(plan),
                       stats::EmptyPublicModel(num_cols, 0, centre), std::move(public_rng),
                       adaptive);
  s.ExtendForCurrent();
  return s;
}

void StatsServerSession::ExtendForCurrent() {
  if (done()) return;
  const int32_t dim = current().dim;
  if (dim > model_.dim) model_ = stats::WithFactors(model_, dim, FactorScale(dim), public_rng_);
}

absl::Status StatsServerSession::Close(const stats::Statistics& sum) {
  if (done()) return absl::FailedPreconditionError("every release of the job is closed");
  const StatsReleasePlan& release = current();
  if (sum.dim != release.dim || sum.num_cols != model_.cols.rows() ||
      sum.values.size() != static_cast<size_t>(sum.num_cols) * stats::StatsWidth(sum.dim)) {
    return absl::InvalidArgumentError(
        absl::StrCat("release ", next_, ": the sum has dimension ", sum.dim, " over ", sum.num_cols,
                     " columns, the release ", release.dim, " over ", model_.cols.rows()));
  }
  const StatsConfig& sc = config_.stats;
  stats::SolveOptions solve;
  solve.factor_l2 = sc.public_factor_l2;
  solve.bias_l2 = sc.col_bias_l2;
  solve.noise_ridge = sc.noise_ridge;
  solve.sigma = release.sum_sigma;
  solve.min_count = sc.min_count_sigmas * release.sum_sigma;
  model_ = stats::SolvePublic(sum, model_, solve);
  last_sum_ = sum;
  if (next_ == 0 && adaptive_) {
    // The bias release is public now: it decides how many factor releases
    // the rest of the budget is split into (a GDP filter: the mu_t^2 still
    // sum to mu^2, Smith and Thakurta 2022).
    JobConfig chosen = config_;
    ASSIGN_OR_RETURN(chosen.stats.factor_releases, AdaptiveFactorReleases(config_, parties_, sum));
    ASSIGN_OR_RETURN(plan_, PlanStatistics(chosen, parties_));
  }
  ++next_;
  ExtendForCurrent();
  return absl::OkStatus();
}

// ----------------------------------------------------------------- party

absl::StatusOr<std::unique_ptr<StatsPartySession>> StatsPartySession::Create(
    const JobConfig& config, data::PartyData data, int32_t num_cols, double centre,
    random::Csprng rng) {
  std::unique_ptr<StatsPartySession> p(new StatsPartySession());
  p->config_ = config;
  p->by_user_ = config.split == SplitKind::kHorizontal;
  p->range_ = data.range;
  p->users_ = data.num_users();
  p->items_ = data.num_items();
  p->num_cols_ = num_cols;
  p->centre_ = centre;
  p->rng_ = std::move(rng);
  p->all_train_ = data.train;
  std::vector<data::Rating> fit = std::move(data.train);
  p->validation_ =
      HoldOutByRatingHash(fit, config.validation_fraction, p->rng_.Fork("validation").NextU64());
  p->test_ = std::move(data.test);
  ASSIGN_OR_RETURN(p->fit_rows_, stats::MakeRows(fit, p->users_, p->items_, p->by_user_));
  ASSIGN_OR_RETURN(p->all_rows_, stats::MakeRows(p->all_train_, p->users_, p->items_, p->by_user_));
  if (p->fit_rows_.num_cols != num_cols) {
    return absl::InvalidArgumentError(absl::StrCat("party ", data.party, " has ",
                                                   p->fit_rows_.num_cols,
                                                   " shared columns, the federation ", num_cols));
  }
  return p;
}

double StatsPartySession::MaxAbs(const StatsReleasePlan& release, bool per_rating) const {
  const stats::StatsOptions so = ReleaseStatsOptions(config_.stats, per_rating, release.dim);
  return stats::MagnitudeBound(so, fit_rows_.num_rows) +
         (release.share_sigma > 0 ? 64 * release.share_sigma : 0);
}

absl::StatusOr<stats::Statistics> StatsPartySession::Release(int32_t t,
                                                             const StatsReleasePlan& release,
                                                             bool per_rating,
                                                             const stats::PublicModel& model) {
  if (model.cols.rows() != num_cols_ || model.dim < release.dim ||
      model.cols.cols() != model.dim + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "release ", t, ": the public model has ", model.cols.rows(), " columns of ",
        model.cols.cols(), " numbers, the job ", num_cols_, " of at least ", release.dim + 1));
  }
  // The server's model is clipped before any row is fitted against it: the
  // sensitivity holds for any finite model, and these bounds keep every
  // number of the fit finite.
  ASSIGN_OR_RETURN(const stats::PublicModel sane,
                   stats::SanitizePublicModel(model, kPublicBiasBound * (range_.max - range_.min),
                                              kPublicFactorBound));
  const stats::StatsOptions so = ReleaseStatsOptions(config_.stats, per_rating, release.dim);
  share_ = stats::ReleaseStatistics(fit_rows_, sane, ReleaseFitOptions(config_.stats), so);
  random::Csprng noise = rng_.Fork(absl::StrCat("noise/", t));
  stats::AddSnappedNoise(share_, release.share_sigma, stats::MagnitudeBound(so, fit_rows_.num_rows),
                         noise);
  return share_;
}

absl::Status StatsPartySession::Finish(const stats::Statistics& sum,
                                       const stats::PublicModel& model, const StatsPlan& plan) {
  if (sum.values.size() != share_.values.size() || sum.dim != share_.dim) {
    return absl::InvalidArgumentError("the last sum does not match the party's last release");
  }
  for (double v : sum.values) {
    if (!std::isfinite(v))
      return absl::InvalidArgumentError("the last sum holds a non-finite number");
  }
  if (!model.cols.allFinite() || model.cols.rows() != num_cols_ ||
      model.cols.cols() != model.dim + 1) {
    return absl::InvalidArgumentError(
        "the final public model is not finite or has the wrong shape");
  }
  const StatsConfig& sc = config_.stats;
  stats::Statistics others = sum;
  stats::SubtractFrom(others, share_);
  random::Csprng own_rng = rng_.Fork("own-start");
  const stats::PublicModel own_start = stats::WithFactors(
      stats::EmptyPublicModel(num_cols_, 0, centre_), sc.dim, FactorScale(sc.dim), own_rng);
  random::Csprng fused_rng = rng_.Fork("fused-start");
  const stats::PublicModel fused_start =
      model.dim >= sc.dim ? model
                          : stats::WithFactors(model, sc.dim, FactorScale(sc.dim), fused_rng);
  // Others' statistics per rating of the party's own scale: the release
  // weighs a rating 1/sqrt(n_r) per row (1 per rating).
  double base = 1;
  if (!plan.per_rating) {
    double weight = 0;
    for (int32_t r = 0; r < fit_rows_.num_rows; ++r) {
      weight += std::sqrt(static_cast<double>(fit_rows_.RowSize(r)));
    }
    base = weight > 0 ? static_cast<double>(fit_rows_.nnz()) / weight : 1;
  }
  stats::FusionOptions fo;
  fo.dim = sc.dim;
  fo.others_sigma = plan.releases.back().others_sigma;
  fo.noise_ridge = sc.noise_ridge;
  fo.fit.factor_l2 = sc.factor_l2;
  fo.fit.bias_l2 = sc.col_bias_l2;
  fo.fit.bias_clip = range_.max - range_.min;
  fo.fit.factor_norm = 0;
  fo.col_factor_l2 = sc.factor_l2;
  fo.col_bias_l2 = sc.col_bias_l2;
  fo.iterations = sc.fusion_iterations;
  // The party's own model: its data alone from its own random start (what
  // it would do alone), at the ridge its validation ratings prefer, with
  // kOwnIterations ALS iterations. Fused models start from the public model
  // and add the others' statistics at weight w * base, at the job's ridge,
  // and the best weight is tried at the smaller ridges too. A fused model
  // replaces the party's own only if it is better on the validation ratings
  // by more than kChoiceMarginSe standard errors of the paired difference: a
  // party does not trade its own model for a noisy one on a validation draw.
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
    errors = SquaredErrors(fit(fit_rows_, c), validation_, by_user_, range_);
    double mse = 0;
    for (double e : errors) mse += e;
    return mse / static_cast<double>(std::max<size_t>(errors.size(), 1));
  };
  const std::vector<double> ridges = {sc.factor_l2 / 10, sc.factor_l2 / 4, sc.factor_l2};
  std::vector<double> own_errors, errors;
  double best_mse = std::numeric_limits<double>::infinity();
  Choice best;
  // What the party would do alone, chosen on its validation ratings:
  // factors at each ridge with kOwnIterations or the fused models' fewer
  // iterations (stopping early regularizes: 70k synthetic, epsilon 16, seed
  // 1, every party kept its own model, which tested 0.4002 with 15 iterations
  // only and 0.3951 with the choice of both; docs/results.md, section stats).
  std::vector<int32_t> own_iterations = {kOwnIterations};
  if (sc.fusion_iterations < kOwnIterations) own_iterations.push_back(sc.fusion_iterations);
  for (double l2 : ridges) {
    for (int32_t iterations : own_iterations) {
      const Choice c{-1, l2, iterations};
      const double mse = validate(c, errors);
      if (mse < best_mse) {
        best_mse = mse;
        best = c;
        own_errors = errors;
      }
    }
  }
  // The best fused model on validation: its weight at the job's ridge, then
  // that weight at the smaller ridges.
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
  if (fused_mse < best_mse && ClearlyBetter(fused_errors, own_errors, validation_, by_user_)) {
    best_mse = fused_mse;
    best = fused;
  }
  model_ = fit(all_rows_, best);
  validation_mse_ = best_mse;
  model_kind_ = best.weight < 0 ? "own" : "federated";
  others_weight_ = options_for(best).others_weight;
  return absl::OkStatus();
}

PartyResult StatsPartySession::TakeResult(int32_t party, double epsilon, int64_t releases) {
  PartyResult r;
  r.party = party;
  r.users = users_;
  r.items = items_;
  r.train_ratings = static_cast<int64_t>(all_train_.size());
  r.epsilon = epsilon;
  r.steps = releases;
  if (!model_) return r;
  r.test = Evaluate(*model_, test_, by_user_, range_);
  r.train = Evaluate(*model_, all_train_, by_user_, range_);
  r.validation.mse = validation_mse_;
  r.validation.rmse = std::sqrt(validation_mse_);
  r.validation.count = static_cast<int64_t>(validation_.size());
  r.model_kind = model_kind_;
  r.others_weight = others_weight_;
  auto [row_emb, col_emb] = Embeddings(*model_);
  r.user_embeddings = by_user_ ? std::move(row_emb) : std::move(col_emb);
  r.item_embeddings = by_user_ ? std::move(col_emb) : std::move(row_emb);
  if (config_.measure_ranking) {
    // Top-N as an SGD party's model is measured (docs/results.md, section
    // ranking), with the default rule: the final model is refit on the
    // validation ratings, so a rule chosen there would select on seen ratings.
    mf::RankingOptions o;
    o.relevant_min = range_.min + 0.75 * (range_.max - range_.min);
    const std::vector<int32_t> support = mf::ItemSupport(all_train_, items_);
    r.ranking_rule = mf::DefaultRankingRule(all_train_);
    r.ranking = mf::EvaluateRanking(
        all_train_, test_, users_, items_,
        mf::ModelScorer(r.user_embeddings, r.item_embeddings, support, r.ranking_rule), o);
    r.ranking_by_prediction = mf::EvaluateRanking(
        all_train_, test_, users_, items_,
        mf::ModelScorer(r.user_embeddings, r.item_embeddings, support, mf::RankingRule{}), o);
    r.popularity =
        mf::EvaluateRanking(all_train_, test_, users_, items_, mf::PopularityScorer(support), o);
  }
  return r;
}

}  // namespace fedmf::fmf
