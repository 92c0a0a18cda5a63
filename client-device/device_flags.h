// The policy and rating-range flags of fedmf-device, shared by its LFL and
// Hua S3 roles: `--policy FILE` (YAML, device_policy.h) and per-key flags
// that override it. Header-only: registered on the binary's CLI11 app.
#ifndef FEDMF_CLIENT_DEVICE_DEVICE_FLAGS_H_
#define FEDMF_CLIENT_DEVICE_DEVICE_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client-device/device_policy.h"
#include "common/base/status_macros.h"
#include "common/data/ratings.h"

namespace fedmf::device {

struct PolicyFlags {
  std::string policy_file;
  double max_epsilon = 0;
  double delta = 0;
  std::vector<std::string> allowed_settings;
  bool allow_non_private = false;
  int32_t max_iterations = 0;
  bool report_metrics = false;
  bool require_active_secagg = true;
  int64_t min_devices = 0;
  double max_omega = 0;
  std::string rating_range;  // MIN,MAX
  CLI::Option* o_max_epsilon = nullptr;
  CLI::Option* o_delta = nullptr;
  CLI::Option* o_allowed = nullptr;
  CLI::Option* o_non_private = nullptr;
  CLI::Option* o_max_iterations = nullptr;
  CLI::Option* o_report = nullptr;
  CLI::Option* o_require_active = nullptr;
  CLI::Option* o_min_devices = nullptr;
  CLI::Option* o_max_omega = nullptr;
};

inline void AddPolicyFlags(CLI::App& app, PolicyFlags& f) {
  app.add_option("--policy", f.policy_file,
                 "the host's privacy policy (YAML: max_epsilon, delta, allowed_settings, "
                 "allow_non_private, max_iterations, report_metrics, require_active_secagg, "
                 "min_devices, max_omega); the flags below override it");
  f.o_max_epsilon = app.add_option("--max-epsilon", f.max_epsilon,
                                   "every device's total epsilon budget, all jobs (default 8)");
  f.o_delta = app.add_option("--max-delta", f.delta,
                             "largest delta a job may ask; the ledger's delta (default 1e-5)");
  f.o_allowed = app.add_option("--allowed-settings", f.allowed_settings,
                               "settings this host takes part in (default lfl hua-s3)")
                    ->delimiter(',');
  f.o_non_private = app.add_flag("--allow-non-private", f.allow_non_private,
                                 "accept epsilon = inf jobs (releases without noise; default off)");
  f.o_max_iterations = app.add_option("--max-iterations", f.max_iterations,
                                      "largest T a job may ask (default 1000)");
  f.o_report = app.add_flag("--report-metrics", f.report_metrics,
                            "send the devices' test metrics (computed without noise) to the "
                            "server (default off)");
  f.o_require_active = app.add_option(
      "--require-active-secagg", f.require_active_secagg,
      "true|false: take part only in secure aggregation that is secure against an active "
      "server (signed keys, consistency check); default true");
  f.o_min_devices = app.add_option("--min-devices", f.min_devices,
                                   "least number of devices an LFL job may have (default 2)");
  f.o_max_omega =
      app.add_option("--max-omega", f.max_omega,
                     "largest tolerated dropout omega an LFL job may ask (default 0.5)");
  app.add_option("--rating-range", f.rating_range,
                 "MIN,MAX: the hosted ratings' declared range (default: the one --devices-from "
                 "declares); sensitivity uses it, a job with another range is refused");
}

inline absl::StatusOr<DevicePolicy> ResolvePolicy(const PolicyFlags& f) {
  DevicePolicy p;
  if (!f.policy_file.empty()) {
    absl::StatusOr<DevicePolicy> loaded = LoadDevicePolicy(f.policy_file);
    if (!loaded.ok()) return loaded.status();
    p = *loaded;
  }
  if (*f.o_max_epsilon) p.max_epsilon = f.max_epsilon;
  if (*f.o_delta) p.delta = f.delta;
  if (*f.o_allowed) p.allowed_settings = f.allowed_settings;
  if (*f.o_non_private) p.allow_non_private = f.allow_non_private;
  if (*f.o_max_iterations) p.max_iterations = f.max_iterations;
  if (*f.o_report) p.report_metrics = f.report_metrics;
  if (*f.o_require_active) p.require_active_secagg = f.require_active_secagg;
  if (*f.o_min_devices) p.min_devices = f.min_devices;
  if (*f.o_max_omega) p.max_omega = f.max_omega;
  RETURN_IF_ERROR(ValidateDevicePolicy(p));
  return p;
}

inline absl::StatusOr<std::optional<data::RatingRange>> ResolveRatingRange(const PolicyFlags& f) {
  if (f.rating_range.empty()) return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(f.rating_range, ',');
  data::RatingRange r;
  if (parts.size() != 2 || !absl::SimpleAtod(parts[0], &r.min) ||
      !absl::SimpleAtod(parts[1], &r.max) || !(r.max > r.min)) {
    return absl::InvalidArgumentError(absl::StrCat("--rating-range '", f.rating_range,
                                                   "': expected MIN,MAX with MIN < MAX, e.g. 1,5"));
  }
  return r;
}

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_DEVICE_FLAGS_H_
