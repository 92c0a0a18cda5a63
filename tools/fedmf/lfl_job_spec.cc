#include "tools/fedmf/lfl_job_spec.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "tools/fedmf/cli_util.h"

namespace fedmf::cli {

absl::StatusOr<std::vector<v1::DeviceGrant>> ParseDeviceGrants(
    const config::YamlMap& root, const std::vector<std::string>& hosts) {
  std::vector<v1::DeviceGrant> grants;
  for (const std::string& h : hosts) {
    std::vector<std::string> parts = absl::StrSplit(h, ':');
    uint64_t first = 0;
    uint32_t count = 0;
    if (parts.size() != 3 || parts[0].empty() || !absl::SimpleAtoi(parts[1], &first) ||
        !absl::SimpleAtoi(parts[2], &count)) {
      return absl::InvalidArgumentError(
          absl::StrCat(root.Where("device_hosts"), "'", h,
                       "': expected HOST:FIRST:COUNT, e.g. device-host-0:0:100 (devices 0..99)"));
    }
    v1::DeviceGrant g;
    g.set_host(parts[0]);
    g.set_first_device(first);
    g.set_count(count);
    grants.push_back(g);
  }
  return grants;
}

absl::StatusOr<v1::JobSpec> LflJobSpecFromYaml(config::YamlMap& root, const std::string& path) {
  net::LflJobConfig j;
  lfl::LflConfig& c = j.config;
  std::string setting, epsilon = "1";
  std::vector<std::string> hosts;
  int64_t seed = -1;
  config::FirstError check;
  check(root.GetString("job_id", &j.job_id));
  check(root.GetString("setting", &setting));
  check(root.GetString("epsilon", &epsilon));
  check(root.GetDouble("delta", &c.delta));
  check(root.GetInt("rounds", &c.iterations));
  check(root.GetInt("dim", &c.dim));
  check(root.GetDouble("omega", &c.omega));
  check(root.GetDouble("learning_rate", &c.learning_rate));
  check(root.GetDouble("lr_final_ratio", &c.lr_final_ratio));
  check(root.GetDouble("sgd_learning_rate", &c.device.sgd_learning_rate));
  check(root.GetDouble("sgd_l2", &c.device.sgd_l2));
  check(root.GetInt("pretrain_epochs", &c.device.pretrain_epochs));
  check(root.GetInt("finetune_epochs", &c.device.finetune_epochs));
  check(root.GetDouble("rating_max", &c.device.rating_max));
  check(root.GetDouble("test_fraction", &c.test_fraction));
  check(root.GetInt("seed", &seed));
  check(root.GetInt("num_items", &j.num_items));
  check(root.GetStringList("device_hosts", &hosts));
  check(root.GetDouble("phase_deadline_seconds", &j.phase_deadline_seconds));
  check(root.GetDouble("join_deadline_seconds", &j.join_deadline_seconds));
  check(root.GetBool("complete_graph", &j.complete_graph));
  bool semi_honest = false;
  check(root.GetBool("semi_honest_secagg", &semi_honest));
  j.active_secagg = !semi_honest;
  check(root.GetInt("secagg_bits", &c.secagg_bits));
  check(root.GetDouble("secagg_design_dropout", &j.secagg_design_dropout));
  check(root.GetBool("secagg_session", &j.secagg_session));
  std::string algorithm = "whole";
  check(root.GetString("algorithm", &algorithm));
  check(root.GetDouble("clip_norm", &c.device.clip_norm));
  RETURN_IF_ERROR(check.status());
  if (algorithm != "whole" && algorithm != "paper") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": algorithm '", algorithm,
        "': must be whole (each device's whole gradient; the default) or paper (one sampled "
        "rating per device and iteration)"));
  }
  c.device.whole_gradient = algorithm == "whole";
  RETURN_IF_ERROR(root.Finish());
  ASSIGN_OR_RETURN(double eps, ParseEpsilon(epsilon, "epsilon"));
  c.epsilon = eps;
  c.device.dim = c.dim;
  if (seed >= 0) c.seed = static_cast<uint64_t>(seed);
  auto grants = ParseDeviceGrants(root, hosts);
  if (!grants.ok()) return grants.status();
  j.grants = *std::move(grants);
  v1::JobSpec spec = net::SpecFromLflJob(j);
  if (auto back = net::LflJobFromSpec(spec); !back.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", back.status().message()));
  }
  return spec;
}

}  // namespace fedmf::cli
