#include "common/fmf/noise_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/base/status_macros.h"
#include "common/dp/calibration.h"
#include "common/dp/noise.h"
#include "common/dp/rdp_accountant.h"
#include "common/dp/rdp_conversion.h"
#include "common/dp/snapping.h"
#include "common/mf/clipping.h"

namespace fedmf::fmf {
namespace {

// epsilon of `steps` subsampled Gaussian steps at (q, z) composed with one
// full-batch Gaussian step at z_count, in RDP (Mironov 2017, Prop. 1).
absl::StatusOr<dp::EpsilonResult> EpsilonWithCount(double q, double z, int64_t steps,
                                                   double z_count, double delta) {
  const std::vector<double>& orders = dp::DefaultRdpOrders();
  std::vector<double> rdp = dp::ComputeRdp(q, z, steps, orders);
  if (z_count > 0) {
    const std::vector<double> count = dp::ComputeRdp(1.0, z_count, 1, orders);
    for (size_t i = 0; i < rdp.size(); ++i) rdp[i] += count[i];
  }
  return dp::RdpToEpsilon(orders, rdp, delta);
}

// kCoupling: every round is one Poisson-subsampled Gaussian step at (q, z)
// with sensitivity C (the per-sample clip) under add/remove-one-rating
// neighbours; there is no size release (the step is a sum, not a mean: no
// count shapes it).
absl::StatusOr<NoisePlan> PlanCouplingNoise(const JobConfig& config, NoisePlan plan) {
  ASSIGN_OR_RETURN(
      plan.noise_multiplier,
      dp::CalibrateNoiseMultiplier(config.sample_rate, plan.steps, config.delta, config.epsilon));
  ASSIGN_OR_RETURN(auto eps, EpsilonWithCount(config.sample_rate, plan.noise_multiplier, plan.steps,
                                              0, config.delta));
  plan.epsilon = eps.epsilon;
  plan.sigma_both = plan.sigma_one = plan.noise_multiplier * plan.clip_norm;
  return plan;
}

}  // namespace

dp::LedgerUnit ChargeUnit(const JobConfig& config) {
  return config.setting != Setting::kCoupling && config.granularity == Granularity::kUser
             ? dp::LedgerUnit::kUser
             : dp::LedgerUnit::kRating;
}

double DrawSizeRelease(double count, double count_sigma, random::Csprng& rng) {
  const double noisy = count + dp::SampleGaussian(rng, count_sigma);
  // At least 1 (the normaliser divides by it), no upper clamp; snapped in
  // the binade, so the set of possible values is one fixed format whatever
  // the data (post-processing; docs/privacy.md, size-release).
  return dp::SnapInBinadeTowardZero(std::max(1.0, noisy), count_sigma);
}

int64_t CountReleaseRound(const JobConfig& config) {
  return static_cast<int64_t>(config.EffectiveRounds()) + 1;
}

absl::StatusOr<NoisePlan> PlanNoise(const JobConfig& config) {
  RETURN_IF_ERROR(ValidateJobConfig(config));
  NoisePlan plan;
  plan.steps = config.ChargedSteps();
  plan.sample_rate = config.sample_rate;
  plan.sampling_unit = config.DpSamplingUnit();
  plan.delta = config.delta;
  // Only DP phases are planned; non-private settings (central, HFL
  // local-only) and epsilon = inf release nothing noisy.
  const bool needs_noise =
      config.private_training() &&
      !(config.setting == Setting::kCentral ||
        (config.setting == Setting::kLocal && config.split == SplitKind::kHorizontal));
  plan.private_training = needs_noise;
  // What the party clips to, whether or not noise follows.
  if (config.UserClipped() || config.setting == Setting::kCoupling) {
    plan.clip_norm = config.EffectiveClipNorm();
  }
  if (!needs_noise) {
    plan.epsilon = std::numeric_limits<double>::infinity();
    return plan;
  }
  if (config.setting == Setting::kCoupling) return PlanCouplingNoise(config, plan);
  // 1. The gradient steps alone, to find the order that matters and their
  //    RDP there; 2. the count's z so that it costs kCountRdpShare of that
  //    (a public function of the public plan); 3. the gradient steps' z again,
  //    now for the composition of both, so that `epsilon` <= the target.
  auto z_alone =
      dp::CalibrateNoiseMultiplier(config.sample_rate, plan.steps, config.delta, config.epsilon);
  if (!z_alone.ok()) return z_alone.status();
  ASSIGN_OR_RETURN(auto alone,
                   EpsilonWithCount(config.sample_rate, *z_alone, plan.steps, 0, config.delta));
  const double order = alone.order;
  const double rdp_at_order = dp::ComputeRdp(config.sample_rate, *z_alone, plan.steps, {order})[0];
  if (!(rdp_at_order > 0) || !std::isfinite(rdp_at_order)) {
    return absl::InternalError("noise plan: the gradient steps' RDP is not positive and finite");
  }
  plan.count_noise_multiplier = std::sqrt(order / (2 * kCountRdpShare * rdp_at_order));
  // Bisection on z (epsilon is non-increasing in z): hi meets the target.
  auto meets = [&](double z) -> absl::StatusOr<bool> {
    auto e = EpsilonWithCount(config.sample_rate, z, plan.steps, plan.count_noise_multiplier,
                              config.delta);
    if (!e.ok()) return e.status();
    return e->epsilon <= config.epsilon;
  };
  double lo = *z_alone, hi = *z_alone * 1.25;
  for (;;) {
    ASSIGN_OR_RETURN(auto ok, meets(hi));
    if (ok) break;
    lo = hi;
    hi *= 2;
    if (hi > dp::kMaxCalibratedNoiseMultiplier) {
      return absl::OutOfRangeError("noise plan: the target epsilon is unreachable with the count");
    }
  }
  while (hi - lo > 1e-9 * hi) {
    const double mid = 0.5 * (lo + hi);
    ASSIGN_OR_RETURN(auto ok, meets(mid));
    (ok ? hi : lo) = mid;
  }
  plan.noise_multiplier = hi;
  auto eps = EpsilonWithCount(config.sample_rate, plan.noise_multiplier, plan.steps,
                              plan.count_noise_multiplier, config.delta);
  if (!eps.ok()) return eps.status();
  plan.epsilon = eps->epsilon;
  if (config.UserClipped()) {
    // HFL only moves V: a user's clipped contribution to the sum is the whole
    // Delta (docs/privacy.md, section hfl-clip); the count is of users.
    plan.sigma_both = plan.sigma_one = plan.noise_multiplier * plan.clip_norm;
    plan.count_sensitivity = 1;
  } else {
    const double scale = config.granularity == Granularity::kUser
                             ? static_cast<double>(config.EffectiveTheta())
                             : 1.0;
    if (config.granularity == Granularity::kUser) plan.theta = config.EffectiveTheta();
    plan.sigma_both =
        plan.noise_multiplier * scale * mf::SensitivityBothMatrices(config.rating_max);
    plan.sigma_one = plan.noise_multiplier * scale * mf::SensitivityOneMatrix(config.rating_max);
    // The count moves by at most theta (a user's trimmed ratings) or 1 (a rating).
    plan.count_sensitivity = scale;
  }
  plan.count_sigma = plan.count_noise_multiplier * plan.count_sensitivity;
  return plan;
}

}  // namespace fedmf::fmf
