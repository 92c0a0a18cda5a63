// A device host's own privacy policy (the party's policy model, party/
// party_config.h, for cross-device hosts). The server cannot change it: every
// job, and every iteration of it, is checked against it before a device
// computes or releases anything. Loaded from `fedmf-device --policy FILE`
// (YAML, docs/configuration.md) and/or flags; defaults are the safe ones.
#ifndef FEDMF_CLIENT_DEVICE_DEVICE_POLICY_H_
#define FEDMF_CLIENT_DEVICE_DEVICE_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"

namespace fedmf::device {

struct DevicePolicy {
  double max_epsilon = 8.0;  // every device's total budget (its ledger, all jobs)
  double delta = 1e-5;       // largest delta a job may ask; the ledger's delta
  std::vector<std::string> allowed_settings{"lfl", "hua-s3"};
  bool allow_non_private = false;  // accept epsilon = inf jobs
  int32_t max_iterations = 1000;   // largest T a job may ask
  // Opt-in: send DeviceMetricsReport / HuaResultReport test metrics (test
  // MSE/MAE and counts, computed on the devices' data without noise).
  bool report_metrics = false;
  // LFL secure aggregation (secagg_guard.h). The server is the adversary:
  // by default a device takes part only in actively secure aggregation
  // (signed keys, consistency check) and never lets the server downgrade it.
  bool require_active_secagg = true;
  // Least n (devices of the job) and largest omega (tolerated dropout) this
  // host accepts: together they bound the survivors ceil((1 - omega) n)
  // below which its devices release no unmasking share.
  int64_t min_devices = 2;
  double max_omega = 0.5;
};

// The policy from YAML text (keys as DevicePolicy; unknown keys are errors
// naming file:line). `name` is the file name used in errors.
absl::StatusOr<DevicePolicy> ParseDevicePolicy(const std::string& text, const std::string& name);
absl::StatusOr<DevicePolicy> LoadDevicePolicy(const std::string& path);
// kInvalidArgument naming the key when a value is out of range.
absl::Status ValidateDevicePolicy(const DevicePolicy& policy);

// The job-level decision, before any data is touched. Empty = accept;
// otherwise the reason the host refuses. `epsilon` is the job's whole-job
// target (inf = no noise), `iterations` its T.
std::string DevicePolicyRefusal(const DevicePolicy& policy, const std::string& setting,
                                double epsilon, double delta, int64_t iterations);

// An iteration index the server asks for must lie in [0, T) of the job and
// below the policy's max_iterations. Empty = fine.
std::string IterationRefusal(const DevicePolicy& policy, int64_t iteration, int64_t job_iterations);

// The job's rating range must be the host's own declared range (the one its
// data was loaded and validated with): sensitivity is computed from the
// host's, and a job that disagrees is refused. Empty = agree.
std::string RatingRangeRefusal(const data::RatingRange& own, double job_min, double job_max);

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_DEVICE_POLICY_H_
