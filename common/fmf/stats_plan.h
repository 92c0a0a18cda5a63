// The noise and the accounting of Algorithm::kStatistics (issue #53).
//
// The job's releases are Gaussian mechanisms on every number of a statistic
// vector with L2 sensitivity Delta_t (stats_release.h), no subsampling: the
// whole composition is mu-GDP with mu = sqrt(sum_t mu_t^2) exactly
// (common/dp/gaussian_dp.h). The budget mu(epsilon, delta) is split over the
// releases (the bias release gets StatsConfig::bias_budget_share of mu^2),
// so release t needs noise sigma_t = Delta_t / mu_t on the federation's sum.
//
// Noise once among the parties (share arithmetic). Each of the s parties
// adds N(0, sigma_t^2 / (s - c)) to its own statistics and secure
// aggregation reveals only the sum. A user's party is honest; the adversary
// is the server together with up to c other parties (c =
// max_colluding_parties), who subtract their own shares: s - c shares remain,
// sigma_t^2 — `epsilon`. A party receives the sum and knows its own share, so
// c >= 1 whenever s >= 2. If all s - 1 others collude only the user's own
// party's share protects it: sigma_t^2 / (s - c) — `epsilon_alone`. A party
// whose policy charges epsilon_alone (charge_epsilon_alone) calibrates its
// share to the full sigma_t^2 instead; `epsilon` is then smaller.
#ifndef FEDMF_COMMON_FMF_STATS_PLAN_H_
#define FEDMF_COMMON_FMF_STATS_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fmf/job_config.h"

namespace fedmf::fmf {

struct StatsReleasePlan {
  int32_t dim = 0;          // 0: biases only
  double sensitivity = 0;   // Delta_t
  double share_sigma = 0;   // each party's noise share (0: non-private)
  double sum_sigma = 0;     // noise on the sum of all s shares
  double others_sigma = 0;  // what a party sees in the others' part: s - 1 shares
};

struct StatsPlan {
  bool private_training = false;
  int32_t parties = 0;
  int32_t colluding = 0;  // c
  bool per_rating = false;
  std::vector<StatsReleasePlan> releases;
  // mu-GDP and (epsilon, delta) against the server and c parties, and
  // against all other parties (the own share alone). inf when non-private.
  double mu = 0, mu_alone = 0;
  double epsilon = 0, epsilon_alone = 0;
  double delta = 0;
  // What the party's ledger is charged: epsilon, or epsilon_alone.
  double charged_epsilon = 0;
};

// The factor releases of a per-user job: StatsConfig::factor_releases, or
// for 0 the rule 1 + floor(log4(epsilon / 16)) clamped to [1, 5] (5 for a
// non-private job).
int32_t StatsFactorReleases(const JobConfig& config);

// The releases of `config` (a kStatistics job) for `parties` parties, their
// sensitivities and noise. InvalidArgument for c outside [1, s - 1] (s >= 2;
// c = 0 for s = 1) or an invalid job.
absl::StatusOr<StatsPlan> PlanStatistics(const JobConfig& config, int32_t parties);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_STATS_PLAN_H_
