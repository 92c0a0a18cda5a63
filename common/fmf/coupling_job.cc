#include "common/fmf/coupling_job.h"

#include "common/base/status_macros.h"

namespace fedmf::fmf {

absl::StatusOr<coupling::OwnerSession::Terms> CouplingOwnerTerms(const JobConfig& config,
                                                                 const NoisePlan& plan,
                                                                 const data::RatingRange& range) {
  RETURN_IF_ERROR(ValidateJobConfig(config));
  if (config.setting != Setting::kCoupling) {
    return absl::InvalidArgumentError("CouplingOwnerTerms: not a coupling job");
  }
  coupling::OwnerSession::Terms terms;
  terms.job_id = config.job_id;
  terms.rounds = config.rounds;
  terms.range = range;
  coupling::CouplingOptions& o = terms.options;
  o.dim = config.dim;
  o.epochs = 1;  // unused: the job's rounds are its steps
  o.learning_rate = config.EffectiveLearningRate();
  o.zeta = config.coupling_zeta;
  o.clip = config.EffectiveClipNorm();
  o.noise_multiplier = plan.private_training ? plan.noise_multiplier : 0.0;
  o.sample_rate = config.sample_rate;
  o.coupling_bound = config.coupling_bound;
  o.init_scale = config.coupling_init;
  RETURN_IF_ERROR(coupling::ValidateCouplingOptions(o));
  return terms;
}

}  // namespace fedmf::fmf
