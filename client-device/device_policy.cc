#include "client-device/device_policy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/config/yaml_reader.h"

namespace fedmf::device {
namespace {

absl::StatusOr<DevicePolicy> FromMap(config::YamlMap root) {
  DevicePolicy p;
  config::FirstError check;
  check(root.GetDouble("max_epsilon", &p.max_epsilon));
  check(root.GetDouble("delta", &p.delta));
  check(root.GetStringList("allowed_settings", &p.allowed_settings));
  check(root.GetBool("allow_non_private", &p.allow_non_private));
  check(root.GetInt("max_iterations", &p.max_iterations));
  check(root.GetBool("report_metrics", &p.report_metrics));
  check(root.GetBool("require_active_secagg", &p.require_active_secagg));
  check(root.GetInt("min_devices", &p.min_devices));
  check(root.GetDouble("max_omega", &p.max_omega));
  RETURN_IF_ERROR(check.status());
  RETURN_IF_ERROR(root.Finish());
  if (auto st = ValidateDevicePolicy(p); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(root.Where(), st.message()));
  }
  return p;
}

}  // namespace

absl::StatusOr<DevicePolicy> ParseDevicePolicy(const std::string& text, const std::string& name) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromString(text, name));
  return FromMap(std::move(root));
}

absl::StatusOr<DevicePolicy> LoadDevicePolicy(const std::string& path) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromFile(path));
  return FromMap(std::move(root));
}

absl::Status ValidateDevicePolicy(const DevicePolicy& p) {
  auto bad = [](const char* key, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("policy key '", key, "': ", why));
  };
  if (!(p.max_epsilon > 0) || !std::isfinite(p.max_epsilon)) {
    return bad("max_epsilon", "must be > 0 and finite (e.g. 8)");
  }
  if (!(p.delta > 0 && p.delta < 1)) return bad("delta", "must be in (0, 1), e.g. 1e-5");
  if (p.max_iterations < 1) return bad("max_iterations", "must be >= 1");
  if (p.min_devices < 2) return bad("min_devices", "must be >= 2");
  if (!(p.max_omega >= 0 && p.max_omega < 1))
    return bad("max_omega", "must be in [0, 1), e.g. 0.3");
  for (const std::string& st : p.allowed_settings) {
    if (st != "lfl" && st != "hua-s3") {
      return bad("allowed_settings", absl::StrCat("unknown setting '", st, "' (lfl, hua-s3)"));
    }
  }
  return absl::OkStatus();
}

std::string DevicePolicyRefusal(const DevicePolicy& p, const std::string& setting, double epsilon,
                                double delta, int64_t iterations) {
  if (std::find(p.allowed_settings.begin(), p.allowed_settings.end(), setting) ==
      p.allowed_settings.end()) {
    return absl::StrCat("setting ", setting, " is not allowed by the host's policy (allowed: ",
                        absl::StrJoin(p.allowed_settings, ", "), ")");
  }
  if (iterations < 1 || iterations > p.max_iterations) {
    return absl::StrCat("job iterations ", iterations, " outside the policy's 1..",
                        p.max_iterations, " (max_iterations)");
  }
  if (std::isnan(epsilon) || !(epsilon > 0))
    return absl::StrCat("job epsilon ", epsilon, " invalid");
  if (std::isinf(epsilon)) {
    if (!p.allow_non_private) {
      return "non-private jobs (epsilon = inf) are not allowed by the host's policy "
             "(allow_non_private: false)";
    }
    return "";
  }
  // delta 0: a pure-epsilon mechanism (Hua et al.).
  if (!(delta >= 0) || delta > p.delta) {
    return absl::StrCat("job delta ", delta, " exceeds the policy's ", p.delta);
  }
  if (epsilon > p.max_epsilon) {
    return absl::StrCat("job epsilon ", epsilon, " exceeds the policy cap ", p.max_epsilon,
                        " (max_epsilon)");
  }
  return "";
}

std::string IterationRefusal(const DevicePolicy& p, int64_t iteration, int64_t job_iterations) {
  if (iteration < 0 || iteration >= job_iterations) {
    return absl::StrCat("iteration ", iteration, " is outside the job's 0..", job_iterations - 1);
  }
  if (iteration >= p.max_iterations) {
    return absl::StrCat("iteration ", iteration, " is beyond the policy's max_iterations ",
                        p.max_iterations);
  }
  return "";
}

std::string RatingRangeRefusal(const data::RatingRange& own, double job_min, double job_max) {
  // Exact up to rounding of a decimal written twice (YAML, flags).
  auto same = [](double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
  };
  if (!same(own.max, job_max) || !same(own.min, job_min)) {
    return absl::StrCat("the job's rating range [", job_min, ", ", job_max,
                        "] is not the host's declared range [", own.min, ", ", own.max,
                        "] (--rating-range): sensitivity is computed from the host's own range");
  }
  return "";
}

}  // namespace fedmf::device
