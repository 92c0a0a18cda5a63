#include "common/hua/accounting.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/dp/calibration.h"

namespace fedmf::hua {

double RatingBound(const data::RatingRange& range) {
  return std::max(std::abs(range.min), std::abs(range.max));
}

double ProfileNormBound(const data::RatingRange& range) { return std::sqrt(RatingBound(range)); }

double ErrorBound(const data::RatingRange& range) { return RatingSpan(range) + RatingBound(range); }

double ReportNormBound(const HuaParams& p, const data::RatingRange& range) {
  return 2.0 * ErrorBound(range) * ProfileNormBound(range) *
         std::sqrt(static_cast<double>(p.theta));
}

double ReportClip(const HuaParams& p, const data::RatingRange& range) {
  const double bound = ReportNormBound(p, range);
  return p.clip > 0 ? std::min(p.clip, bound) : bound;
}

double ReportSensitivity(const HuaParams& p, const data::RatingRange& range) {
  return 2.0 * ReportClip(p, range);
}

absl::StatusOr<HuaPrivacy> PlanPrivacy(const HuaParams& p, const data::RatingRange& range) {
  RETURN_IF_ERROR(ValidateHuaParams(p));
  if (!(range.max > range.min)) return absl::InvalidArgumentError("empty rating range");
  HuaPrivacy plan;
  plan.delta = p.delta;
  if (p.paper_noise) {
    plan.epsilon = std::numeric_limits<double>::infinity();
    plan.releases = ReleasesPerRating(p);
    return plan;
  }
  plan.valid = true;
  if (p.scenario == Scenario::kTrusted) {
    // One pure epsilon-DP release of V (central.h TrainTrustedItemsValid).
    plan.releases = 1;
    plan.delta = 0;
    plan.epsilon = p.epsilon;
    return plan;
  }
  plan.clip = ReportClip(p, range);
  plan.sensitivity = 2.0 * plan.clip;
  plan.releases = p.iterations;
  if (std::isinf(p.epsilon)) {
    plan.epsilon = p.epsilon;
    return plan;
  }
  ASSIGN_OR_RETURN(plan.noise_multiplier,
                   dp::CalibrateNoiseMultiplier(1.0, plan.releases, p.delta, p.epsilon));
  plan.sigma = plan.noise_multiplier * plan.sensitivity;
  ASSIGN_OR_RETURN(plan.epsilon,
                   dp::ComputeEpsilon(1.0, plan.noise_multiplier, plan.releases, p.delta));
  // A masked coordinate is at most C plus a share clamped at 10 sigma: it
  // must fit the Z_P codec, or encoding would fail depending on the data.
  if (p.scenario != Scenario::kUntrusted &&
      plan.clip + kNoiseTailSigmas * plan.sigma > p.zp.max_abs) {
    return absl::InvalidArgumentError(
        absl::StrCat("the noise (sigma ", plan.sigma, " per coordinate at epsilon ", p.epsilon,
                     ") does not fit the Z_P encoding (zp_max_abs ", p.zp.max_abs,
                     "): raise epsilon, lower --hua-clip or raise zp_max_abs"));
  }
  return plan;
}

absl::StatusOr<double> UserEpsilon(const HuaPrivacy& plan, int64_t releases) {
  if (releases < 0) return absl::InvalidArgumentError("negative number of releases");
  if (releases == 0) return 0.0;
  if (!plan.valid) return std::numeric_limits<double>::infinity();
  if (plan.noise_multiplier == 0) {
    return plan.delta == 0 ? plan.epsilon : std::numeric_limits<double>::infinity();
  }
  return dp::ComputeEpsilon(1.0, plan.noise_multiplier, releases, plan.delta);
}

}  // namespace fedmf::hua
