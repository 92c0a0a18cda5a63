#include "common/fmf/wire/job_codec.h"

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::net {

absl::StatusOr<fmf::JobConfig> JobConfigFromSpec(const v1::JobSpec& spec) {
  fmf::JobConfig c;
  c.job_id = spec.job_id();
  switch (spec.setting()) {
    case v1::SETTING_VFL:
      c.setting = fmf::Setting::kVfl;
      c.split = fmf::SplitKind::kVertical;
      break;
    case v1::SETTING_HFL:
      c.setting = fmf::Setting::kHfl;
      c.split = fmf::SplitKind::kHorizontal;
      break;
    case v1::SETTING_HFL_SYNSGD:
      c.setting = fmf::Setting::kHflSynSgd;
      c.split = fmf::SplitKind::kHorizontal;
      break;
    case v1::SETTING_COUPLING:
      c.setting = fmf::Setting::kCoupling;
      c.split = fmf::SplitKind::kHorizontal;
      break;
    default:
      return absl::InvalidArgumentError(
          "field 'setting': must be vfl, hfl, hfl-synsgd or coupling");
  }
  switch (spec.granularity()) {
    case v1::GRANULARITY_RATING: c.granularity = fmf::Granularity::kRating; break;
    case v1::GRANULARITY_USER: c.granularity = fmf::Granularity::kUser; break;
    default: return absl::InvalidArgumentError("field 'granularity': must be rating or user");
  }
  c.rounds = spec.rounds();
  c.local_iters = spec.local_iters();
  c.dim = spec.dim();
  c.sample_rate = spec.sample_rate();
  c.epsilon = spec.epsilon();
  c.delta = spec.delta();
  c.theta = spec.theta();
  c.vfl_finetune_iters = spec.vfl_finetune_iters();
  c.learning_rate = spec.learning_rate();
  c.lr_final_ratio = spec.lr_final_ratio();
  c.sgd_learning_rate = spec.sgd_learning_rate();
  c.sgd_l2 = spec.sgd_l2();
  c.pretrain_epochs = spec.pretrain_epochs();
  c.finetune_epochs = spec.finetune_epochs();
  c.rating_max = spec.rating_max();
  c.test_fraction = spec.test_fraction();
  c.item_catalogue = spec.item_catalogue();
  c.align_users = spec.align_users();
  if (!spec.algorithm().empty()) {
    auto algorithm = fmf::ParseAlgorithm(spec.algorithm());
    if (!algorithm.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field 'algorithm': ", algorithm.status().message()));
    }
    c.algorithm = *algorithm;
  }
  if (spec.alternations() != 0) c.alternations = spec.alternations();
  c.validation_fraction = spec.validation_fraction();
  if (spec.max_finetune_epochs() != 0) c.max_finetune_epochs = spec.max_finetune_epochs();
  c.clip_norm = spec.clip_norm();
  if (c.setting == fmf::Setting::kCoupling) {
    // Unset fields keep the defaults.
    if (spec.has_coupling_zeta()) c.coupling_zeta = spec.coupling_zeta();
    if (spec.has_coupling_bound()) c.coupling_bound = spec.coupling_bound();
    if (spec.has_coupling_init()) c.coupling_init = spec.coupling_init();
    if (c.clip_norm == 0) c.clip_norm = -1;  // unset: the paper's C
  }
  // spec.seed is never read: a party's randomness is its own (the server
  // refuses a seeded spec at submit; common/fmf/admitted_job.h).
  RETURN_IF_ERROR(fmf::ValidateJobConfig(c));
  return c;
}

v1::JobSpec SpecFromJobConfig(const fmf::JobConfig& c) {
  v1::JobSpec spec;
  spec.set_job_id(c.job_id);
  switch (c.setting) {
    case fmf::Setting::kVfl: spec.set_setting(v1::SETTING_VFL); break;
    case fmf::Setting::kHflSynSgd: spec.set_setting(v1::SETTING_HFL_SYNSGD); break;
    case fmf::Setting::kCoupling:
      spec.set_setting(v1::SETTING_COUPLING);
      spec.set_coupling_zeta(c.coupling_zeta);
      spec.set_coupling_bound(c.coupling_bound);
      spec.set_coupling_init(c.coupling_init);
      break;
    default: spec.set_setting(v1::SETTING_HFL); break;
  }
  spec.set_granularity(c.granularity == fmf::Granularity::kUser ? v1::GRANULARITY_USER
                                                                : v1::GRANULARITY_RATING);
  spec.set_rounds(c.rounds);
  spec.set_local_iters(c.local_iters);
  spec.set_dim(c.dim);
  spec.set_sample_rate(c.sample_rate);
  spec.set_epsilon(c.epsilon);
  spec.set_delta(c.delta);
  spec.set_theta(c.theta);
  spec.set_vfl_finetune_iters(c.vfl_finetune_iters);
  spec.set_learning_rate(c.learning_rate);
  spec.set_lr_final_ratio(c.lr_final_ratio);
  spec.set_sgd_learning_rate(c.sgd_learning_rate);
  spec.set_sgd_l2(c.sgd_l2);
  spec.set_pretrain_epochs(c.pretrain_epochs);
  spec.set_finetune_epochs(c.finetune_epochs);
  spec.set_rating_max(c.rating_max);
  spec.set_test_fraction(c.test_fraction);
  spec.set_item_catalogue(c.item_catalogue);
  spec.set_align_users(c.align_users);
  spec.set_algorithm(fmf::AlgorithmName(c.algorithm));
  spec.set_alternations(c.alternations);
  spec.set_validation_fraction(c.validation_fraction);
  spec.set_max_finetune_epochs(c.max_finetune_epochs);
  // Resolved: the parties clip to exactly this (0 = trim).
  spec.set_clip_norm(c.EffectiveClipNorm());
  // c.seed stays local: reproducibility seeds are given to each process
  // (party noise_seed, server seed), never sent in a job.
  return spec;
}

}  // namespace fedmf::net
