#include "common/fmf/stats_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/dp/gaussian_dp.h"
#include "common/fmf/stats_federation.h"
#include "common/fmf/stats_release.h"

namespace fedmf::fmf {

int32_t StatsFactorReleases(const JobConfig& config) {
  if (config.stats.factor_releases > 0) return config.stats.factor_releases;
  if (!config.private_training()) return 5;
  const double steps = std::floor(std::log(config.epsilon / 16) / std::log(4.0) + 1e-9);
  return static_cast<int32_t>(std::clamp(1 + steps, 1.0, 5.0));
}

absl::StatusOr<StatsPlan> PlanStatistics(const JobConfig& config, int32_t parties) {
  RETURN_IF_ERROR(ValidateJobConfig(config));
  if (config.algorithm != Algorithm::kStatistics) {
    return absl::InvalidArgumentError("PlanStatistics plans algorithm stats only");
  }
  if (parties < 1) return absl::InvalidArgumentError("a federation needs at least one party");
  const StatsConfig& sc = config.stats;
  const int32_t c = sc.max_colluding_parties;
  if (parties == 1 ? c != 0 : (c < 1 || c > parties - 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stats.max_colluding_parties is ", c, " for ", parties, " parties: it must be in [1, ",
        parties - 1,
        "] (every party receives the sum and knows its own noise share, so it counts as one "
        "colluder; one party alone: 0)"));
  }
  StatsPlan plan;
  plan.parties = parties;
  plan.colluding = c;
  plan.delta = config.delta;
  plan.private_training = config.private_training();
  plan.per_rating = config.granularity == Granularity::kRating;
  // The releases, with their budget weights (shares of mu^2).
  std::vector<double> weights;
  if (plan.per_rating) {
    const stats::StatsOptions so = ReleaseStatsOptions(sc, true, 0);
    const stats::FitOptions fo = ReleaseFitOptions(sc);
    for (int32_t t = 0; t < sc.rating_releases; ++t) {
      plan.releases.push_back({0, stats::RatingSensitivity(so, fo)});
      weights.push_back(1.0 / sc.rating_releases);
    }
  } else {
    const int32_t factor_releases = StatsFactorReleases(config);
    const double factor_share = sc.bias_release ? 1 - sc.bias_budget_share : 1.0;
    if (sc.bias_release) {
      plan.releases.push_back({0, sc.row_clip});
      weights.push_back(sc.bias_budget_share);
    }
    for (int32_t t = 0; t < factor_releases; ++t) {
      plan.releases.push_back({sc.dim, sc.row_clip});
      weights.push_back(factor_share / factor_releases);
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!plan.private_training) {
    plan.mu = plan.mu_alone = plan.epsilon = plan.epsilon_alone = plan.charged_epsilon = kInf;
    return plan;
  }
  // mu of the target, then the guarantee the party's policy charges.
  ASSIGN_OR_RETURN(const double target_mu, dp::GaussianDpMu(config.epsilon, config.delta));
  const double remaining = parties - c;  // shares the adversary cannot remove
  // Share variance v_t = sigma_t^2 / (s - c) for `epsilon`; against all
  // others only v_t remains, so mu_alone = mu * sqrt(s - c).
  plan.mu = sc.charge_epsilon_alone ? target_mu / std::sqrt(remaining) : target_mu;
  plan.mu_alone = plan.mu * std::sqrt(remaining);
  for (size_t t = 0; t < plan.releases.size(); ++t) {
    StatsReleasePlan& r = plan.releases[t];
    const double mu_t = plan.mu * std::sqrt(weights[t]);
    const double sigma = r.sensitivity / mu_t;  // against the server + c
    r.share_sigma = sigma / std::sqrt(remaining);
    r.sum_sigma = r.share_sigma * std::sqrt(static_cast<double>(parties));
    r.others_sigma = r.share_sigma * std::sqrt(static_cast<double>(parties - 1));
  }
  ASSIGN_OR_RETURN(plan.epsilon, dp::GaussianDpEpsilon(plan.mu, config.delta));
  ASSIGN_OR_RETURN(plan.epsilon_alone, dp::GaussianDpEpsilon(plan.mu_alone, config.delta));
  plan.charged_epsilon = sc.charge_epsilon_alone ? plan.epsilon_alone : plan.epsilon;
  return plan;
}

}  // namespace fedmf::fmf
