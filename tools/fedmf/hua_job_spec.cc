#include "tools/fedmf/hua_job_spec.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/wire/hua_codec.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/lfl_job_spec.h"

namespace fedmf::cli {

absl::StatusOr<v1::JobSpec> HuaJobSpecFromYaml(config::YamlMap& root, const std::string& path) {
  net::HuaJob j;
  hua::HuaParams& p = j.params;
  p.scenario = hua::Scenario::kDynamic;
  j.range = {1.0, 5.0};
  std::string job_id, setting, epsilon = "1", aggregator;
  std::vector<std::string> hosts;
  int64_t seed = -1;
  int32_t expected_users = 0;
  double join_deadline = 0, round_deadline = 0;
  config::FirstError check;
  check(root.GetString("job_id", &job_id));
  check(root.GetString("setting", &setting));
  check(root.GetString("epsilon", &epsilon));
  check(root.GetInt("rounds", &p.iterations));
  check(root.GetInt("dim", &p.dim));
  check(root.GetDouble("gamma", &p.gamma));
  check(root.GetDouble("lambda", &p.lambda));
  check(root.GetDouble("mu", &p.mu));
  check(root.GetInt("max_online", &p.max_online));
  check(root.GetDouble("join_prob", &p.join_prob));
  check(root.GetDouble("leave_prob", &p.leave_prob));
  check(root.GetDouble("initial_online", &p.initial_online));
  check(root.GetDouble("rating_min", &j.range.min));
  check(root.GetDouble("rating_max", &j.range.max));
  check(root.GetInt("num_items", &j.num_items));
  check(root.GetDouble("test_fraction", &j.test_fraction));
  check(root.GetInt("seed", &seed));
  check(root.GetString("aggregator", &aggregator));
  check(root.GetBool("paper_noise", &p.paper_noise));  // no valid epsilon: hua::PrivacyCaveat
  check(root.GetDouble("delta", &p.delta));
  check(root.GetInt("theta", &p.theta));
  check(root.GetDouble("clip", &p.clip));
  check(root.GetDouble("validation_fraction", &p.validation_fraction));
  check(root.GetStringList("device_hosts", &hosts));
  check(root.GetInt("expected_users", &expected_users));
  check(root.GetDouble("join_deadline_seconds", &join_deadline));
  check(root.GetDouble("round_deadline_seconds", &round_deadline));
  RETURN_IF_ERROR(check.status());
  RETURN_IF_ERROR(root.Finish());
  ASSIGN_OR_RETURN(double eps, ParseEpsilon(epsilon, "epsilon"));
  p.epsilon = eps;
  if (seed >= 0) {
    j.has_seed = true;
    j.seed = static_cast<uint64_t>(seed);
  }
  if (aggregator.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where(),
                     "'aggregator' is required: the fedmf-aggregator address, "
                     "e.g. aggregator: aggregator:7445"));
  }
  ASSIGN_OR_RETURN(auto grants, ParseDeviceGrants(root, hosts));
  v1::JobSpec spec = net::SpecFromHuaJob(j);
  spec.set_job_id(job_id);
  spec.set_round_deadline_seconds(round_deadline);
  v1::HuaSpec* h = spec.mutable_hua();
  h->set_aggregator(aggregator);
  h->set_expected_users(expected_users);
  h->set_join_deadline_seconds(join_deadline);
  for (const v1::DeviceGrant& g : grants) *h->add_grants() = g;
  if (auto back = net::HuaJobFromSpec(spec); !back.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", back.status().message()));
  }
  return spec;
}

}  // namespace fedmf::cli
