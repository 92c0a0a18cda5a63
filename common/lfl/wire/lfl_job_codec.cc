#include "common/lfl/wire/lfl_job_codec.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/lfl/secagg_sum.h"
#include "common/net/device_grants.h"

namespace fedmf::net {
namespace {

absl::Status Field(const char* name, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("field '", name, "': ", why));
}

}  // namespace

absl::StatusOr<LflJobConfig> LflJobFromSpec(const v1::JobSpec& spec) {
  if (spec.setting() != v1::SETTING_LFL) return Field("setting", "not lfl");
  LflJobConfig j;
  j.job_id = spec.job_id();
  lfl::LflConfig& c = j.config;
  c.iterations = spec.rounds();
  c.dim = spec.dim();
  c.epsilon = spec.epsilon();
  c.delta = spec.delta();
  c.learning_rate = spec.learning_rate();
  c.lr_final_ratio = spec.lr_final_ratio();
  c.device.rating_max = spec.rating_max();
  c.device.sgd_learning_rate = spec.sgd_learning_rate();
  c.device.sgd_l2 = spec.sgd_l2();
  c.device.pretrain_epochs = spec.pretrain_epochs();
  c.device.finetune_epochs = spec.finetune_epochs();
  c.device.dim = spec.dim();
  c.test_fraction = spec.test_fraction();
  if (spec.has_seed()) c.seed = spec.seed();
  const v1::LflSpec& l = spec.lfl();
  c.omega = l.omega();
  c.device.whole_gradient = l.whole_gradient();
  c.device.clip_norm = l.clip_norm();
  j.num_items = l.num_items();
  j.complete_graph = l.complete_graph();
  j.active_secagg = !l.semi_honest_secagg();
  j.secagg_session = l.secagg_session();
  c.secagg_bits = l.secagg_bits() == 0 ? lfl::kDefaultLflBits : l.secagg_bits();
  if (c.secagg_bits < 8 || c.secagg_bits > 64)
    return Field("lfl.secagg_bits", "must be in [8, 64]");
  if (l.phase_deadline_seconds() > 0) j.phase_deadline_seconds = l.phase_deadline_seconds();
  if (l.join_deadline_seconds() > 0) j.join_deadline_seconds = l.join_deadline_seconds();
  if (auto s = lfl::ValidateLflConfig(c); !s.ok()) return Field("spec", std::string(s.message()));
  j.secagg_design_dropout = l.secagg_design_dropout() == 0 ? c.omega : l.secagg_design_dropout();
  if (!(j.secagg_design_dropout > 0 && j.secagg_design_dropout <= c.omega)) {
    return Field("lfl.secagg_design_dropout",
                 absl::StrCat("must be in (0, omega = ", c.omega, "] (0: omega); got ",
                              l.secagg_design_dropout()));
  }
  if (!(c.device.rating_max > 0) || !std::isfinite(c.device.rating_max)) {
    return Field("rating_max", "must be > 0");
  }
  if (!(c.test_fraction >= 0 && c.test_fraction < 1)) return Field("test_fraction", "in [0, 1)");
  if (c.device.pretrain_epochs < 0 || c.device.finetune_epochs < 0) {
    return Field("pretrain_epochs", "epochs must be >= 0");
  }
  if (j.num_items < 1) return Field("lfl.num_items", "must be >= 1");
  if (int64_t{j.num_items} * c.dim > kMaxLflVectorLength) {
    return Field("lfl.num_items", absl::StrCat("num_items * dim exceeds ", kMaxLflVectorLength));
  }
  ASSIGN_OR_RETURN(auto granted, ValidateDeviceGrants(l.grants(), "lfl.grants", uint64_t{1} << 62));
  j.num_devices = static_cast<int64_t>(granted);
  j.grants.assign(l.grants().begin(), l.grants().end());
  if (j.num_devices < 2 || j.num_devices > kMaxLflDevices) {
    return Field("lfl.grants", absl::StrCat(j.num_devices, " devices; need 2..", kMaxLflDevices));
  }
  return j;
}

v1::JobSpec SpecFromLflJob(const LflJobConfig& j) {
  const lfl::LflConfig& c = j.config;
  v1::JobSpec s;
  s.set_job_id(j.job_id);
  s.set_setting(v1::SETTING_LFL);
  s.set_rounds(c.iterations);
  s.set_dim(c.dim);
  s.set_epsilon(c.epsilon);
  s.set_delta(c.delta);
  s.set_learning_rate(c.learning_rate);
  s.set_lr_final_ratio(c.lr_final_ratio);
  s.set_rating_max(c.device.rating_max);
  s.set_sgd_learning_rate(c.device.sgd_learning_rate);
  s.set_sgd_l2(c.device.sgd_l2);
  s.set_pretrain_epochs(c.device.pretrain_epochs);
  s.set_finetune_epochs(c.device.finetune_epochs);
  s.set_test_fraction(c.test_fraction);
  if (c.seed.has_value()) {
    s.set_has_seed(true);
    s.set_seed(*c.seed);
  }
  v1::LflSpec* l = s.mutable_lfl();
  l->set_omega(c.omega);
  l->set_whole_gradient(c.device.whole_gradient);
  l->set_clip_norm(c.device.clip_norm);
  l->set_num_items(j.num_items);
  for (const auto& g : j.grants) *l->add_grants() = g;
  l->set_phase_deadline_seconds(j.phase_deadline_seconds);
  l->set_join_deadline_seconds(j.join_deadline_seconds);
  l->set_complete_graph(j.complete_graph);
  l->set_semi_honest_secagg(!j.active_secagg);
  l->set_secagg_session(j.secagg_session);
  l->set_secagg_bits(c.secagg_bits);
  // 0 (= omega) stays 0 on the wire.
  if (SecAggDesignDropout(j) != c.omega) {
    l->set_secagg_design_dropout(j.secagg_design_dropout);
  }
  for (const auto& g : j.grants) s.add_roster(g.host());
  return s;
}

double SecAggDesignDropout(const LflJobConfig& job) {
  return job.secagg_design_dropout > 0 ? job.secagg_design_dropout : job.config.omega;
}

std::optional<std::string> GrantedHost(const LflJobConfig& job, uint64_t device) {
  for (const auto& g : job.grants) {
    if (device >= g.first_device() && device - g.first_device() < g.count()) return g.host();
  }
  return std::nullopt;
}

}  // namespace fedmf::net
