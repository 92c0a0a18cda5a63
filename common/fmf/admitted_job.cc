#include "common/fmf/admitted_job.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::fmf {

double RatingOffset(const data::RatingRange& range) { return std::min(0.0, range.min); }

double ClippingBound(const data::RatingRange& range) { return range.max - RatingOffset(range); }

absl::StatusOr<AdmittedJob> AdmittedJob::Admit(const JobConfig& offered, const LocalTerms& local,
                                               const AdmissionPolicy& policy) {
  const data::RatingRange& range = local.range;
  if (!std::isfinite(range.min) || !std::isfinite(range.max) || !(range.max > range.min) ||
      !(range.max > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the party's rating range [", range.min, ", ", range.max,
                     "] is invalid: need finite rating_min < rating_max and rating_max > 0"));
  }
  RETURN_IF_ERROR(ValidateJobConfig(offered));
  if (offered.algorithm == Algorithm::kStatistics &&
      (offered.setting == Setting::kHfl || offered.setting == Setting::kVfl)) {
    // Its releases need secure aggregation among the parties, which the
    // daemons do not run for it yet (issue #53): never run it as SGD rounds.
    return absl::UnimplementedError(
        "job field 'algorithm' is stats: it runs in one process (fedmf train) only; over the "
        "daemons use algorithm alternate");
  }
  // The job's R only has to agree with the party's own; it is never used.
  if (std::abs(offered.rating_max - range.max) > 1e-9 * std::max(1.0, std::abs(range.max))) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job field 'rating_max' is ", offered.rating_max, " but the party's ratings lie in [",
        range.min, ", ", range.max, "] (data.rating_min/rating_max): refusing the job"));
  }
  JobConfig config = offered;
  config.rating_max = ClippingBound(range);
  config.seed.reset();
  ASSIGN_OR_RETURN(auto plan, PlanNoise(config));
  if (policy) {
    if (std::string refusal = policy(config, plan); !refusal.empty()) {
      return absl::PermissionDeniedError(refusal);
    }
  }
  // The job id is mixed in: under a local seed, two jobs (which a server may
  // make differ only in V(0)) never share a noise stream, so differencing
  // their releases cancels nothing (docs/privacy.md, party-admission).
  random::Csprng rng = random::Csprng::FromOptionalSeed(local.seed)
                           .Fork(local.stream)
                           .Fork(absl::StrCat("job/", config.job_id));
  return AdmittedJob(std::move(config), plan, range, std::move(rng), local.seed.has_value(),
                     std::max(local.threads, 1), local.pad_stage3);
}

}  // namespace fedmf::fmf
