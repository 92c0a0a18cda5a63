// The knobs of Algorithm::kStatistics (issue #53: item / user statistics
// released once per alternation with the noise added once among the parties;
// common/fmf/stats_release.h has the mechanism, stats_plan.h its noise and
// accounting, stats_federation.h the in-process run). Defaults were chosen on
// the parties' own validation ratings (docs/results.md, section stats).
#ifndef FEDMF_COMMON_FMF_STATS_CONFIG_H_
#define FEDMF_COMMON_FMF_STATS_CONFIG_H_

#include <cstdint>
#include <vector>

namespace fedmf::fmf {

struct StatsConfig {
  // Factor dimension of the releases (per user) and of each party's model.
  int32_t dim = 10;
  // Per user: releases of factors after the bias release (T_f alternations).
  // 0: chosen after the bias release from its public noisy counts
  // (AdaptiveFactorReleases in stats_federation.h: as many, up to 5, as the
  // median column's weighted count carries at 6 noise sigmas; 5 without
  // noise), which reproduces the choices of ML-100K's validation ratings
  // (docs/archive/results-2026.md, section stats). Without a bias release: by epsilon
  // (StatsFactorReleases).
  int32_t factor_releases = 0;
  // Per user: a first release of biases alone (dim 0) before the factors.
  bool bias_release = true;
  // Per rating (dim 0 only: the proof covers biases): how many bias releases.
  int32_t rating_releases = 1;
  // The bias release's share of the privacy budget (of mu^2; the factor
  // releases split the rest evenly). 1 / (factor_releases + 1) = even.
  double bias_budget_share = 0.1;
  // Per user: each user's whole contribution (all its columns) scaled to
  // this L2 norm: the release's sensitivity Delta.
  double row_clip = 1.0;
  // |r - mu0 - b_row| clamped to this in the released right-hand sides.
  double residual_clip = 2.0;
  // Targets of the released rows' bias fits clamped to this (per rating:
  // part of Delta, RatingSensitivity).
  double bias_clip = 2.0;
  // Ridge of the released rows' bias fits (absolute; per rating: part of Delta).
  double bias_l2 = 5.0;
  // Released rows' factors scaled to at most this norm.
  double factor_norm = 1.0;
  // Ridges (absolute): factor_l2 on the rows' factors and the party's
  // model (units of one rating), public_factor_l2 on the public solve's
  // factors (the release's weighted units: a rating weighs ~1/sqrt(n_row)),
  // biases col_bias_l2; plus noise_ridge * sigma * sqrt(k) on the noisy
  // statistics.
  double factor_l2 = 20;
  double public_factor_l2 = 0.5;
  double col_bias_l2 = 1.0;
  double noise_ridge = 1.0;
  // Public factors only for columns whose noisy weighted count reaches this
  // many sigmas of its noise (the rest keep a bias).
  double min_count_sigmas = 3.0;
  // The party's model: ALS iterations, and the weights of the others'
  // statistics it chooses from on its own validation ratings (multiples of
  // its rows' mean 1 / release weight; 0 = its own data alone).
  int32_t fusion_iterations = 5;
  std::vector<double> others_weights = {0, 0.1, 0.25, 0.5, 1, 2, 4, 8};
  // Against whom `epsilon` holds: the server and up to this many other
  // parties pooling their noise shares (>= 1 with two or more parties: every
  // party receives the sum and knows its own share). Each party adds noise of
  // variance sigma^2 / (s - c), so any s - c shares carry sigma^2.
  int32_t max_colluding_parties = 1;
  // The party's policy: charge its budget against `epsilon_alone` (every
  // other party colluding: its own share only) instead of `epsilon`.
  bool charge_epsilon_alone = false;
  // The parties' noisy releases are summed by secure aggregation among them
  // (common/secagg's protocol run in process, fixed point in 64 bits; the
  // snapped shares encode exactly, so the sum is the plain one), or, false,
  // added in the clear (`--aggregation ideal`, for speed). Not a job field
  // of the daemons yet.
  bool secure_aggregation = true;
};

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_STATS_CONFIG_H_
