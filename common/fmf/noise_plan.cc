#include "common/fmf/noise_plan.h"

#include "common/dp/rdp_accountant.h"
#include "common/mf/clipping.h"

namespace fedmf::fmf {

absl::StatusOr<NoisePlan> PlanNoise(const JobConfig& config) {
  if (auto s = ValidateJobConfig(config); !s.ok()) return s;
  NoisePlan plan;
  plan.steps = config.ChargedSteps();
  plan.sample_rate = config.sample_rate;
  plan.delta = config.delta;
  // Only DP phases are planned; non-private settings (central, HFL
  // local-only) and epsilon = inf release nothing noisy.
  const bool needs_noise =
      config.private_training() &&
      !(config.setting == Setting::kCentral ||
        (config.setting == Setting::kLocal && config.split == SplitKind::kHorizontal));
  plan.private_training = needs_noise;
  if (!needs_noise) {
    plan.epsilon = std::numeric_limits<double>::infinity();
    return plan;
  }
  auto z = dp::CalibrateNoiseMultiplier(config.sample_rate, plan.steps, config.delta,
                                        config.epsilon);
  if (!z.ok()) return z.status();
  plan.noise_multiplier = *z;
  auto eps = dp::ComputeEpsilon(config.sample_rate, plan.noise_multiplier, plan.steps,
                                config.delta);
  if (!eps.ok()) return eps.status();
  plan.epsilon = *eps;
  const double scale =
      config.granularity == Granularity::kUser ? static_cast<double>(config.EffectiveTheta()) : 1.0;
  if (config.granularity == Granularity::kUser) plan.theta = config.EffectiveTheta();
  plan.sigma_both = plan.noise_multiplier * scale * mf::SensitivityBothMatrices(config.rating_max);
  plan.sigma_one = plan.noise_multiplier * scale * mf::SensitivityOneMatrix(config.rating_max);
  return plan;
}

}  // namespace fedmf::fmf
