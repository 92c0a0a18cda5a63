// A coupling job (Setting::kCoupling) in the terms of common/coupling: what
// an owner runs, from the job as the party admitted it (its own range and
// noise plan, never the server's values).
#ifndef FEDMF_COMMON_FMF_COUPLING_JOB_H_
#define FEDMF_COMMON_FMF_COUPLING_JOB_H_

#include "absl/status/statusor.h"
#include "common/coupling/owner_session.h"
#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "common/fmf/noise_plan.h"

namespace fedmf::fmf {

// InvalidArgument unless `config` is a valid coupling job.
absl::StatusOr<coupling::OwnerSession::Terms> CouplingOwnerTerms(const JobConfig& config,
                                                                 const NoisePlan& plan,
                                                                 const data::RatingRange& range);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_COUPLING_JOB_H_
