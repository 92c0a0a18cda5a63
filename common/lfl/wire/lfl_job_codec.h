// JobSpec (SETTING_LFL) <-> the LFL-SGDMF configuration, validated once here
// for the server, the device hosts and the CLI alike.
#ifndef FEDMF_COMMON_LFL_WIRE_LFL_JOB_CODEC_H_
#define FEDMF_COMMON_LFL_WIRE_LFL_JOB_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/lfl/lfl_simulator.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::net {

// Bounds on operator-supplied sizes (they drive allocation on every device).
inline constexpr int64_t kMaxLflDevices = int64_t{1} << 20;
inline constexpr int64_t kMaxLflVectorLength = int64_t{1} << 24;

struct LflJobConfig {
  std::string job_id;
  lfl::LflConfig config;  // dropout_* unused: devices decide their own
  int32_t num_items = 0;
  std::vector<v1::DeviceGrant> grants;  // disjoint ranges
  int64_t num_devices = 0;              // sum of the grants
  double phase_deadline_seconds = 60;
  double join_deadline_seconds = 60;
  bool complete_graph = false;
  // Secure aggregation against an active server (signed advertisements and
  // the consistency check; LflSpec.semi_honest_secagg opts out).
  bool active_secagg = true;
  // What k and t are sized for (LflSpec.secagg_design_dropout); in (0, omega].
  // 0 in a spec means omega.
  double secagg_design_dropout = 0;
  // One key setup for the job's aggregations (LflSpec.secagg_session).
  bool secagg_session = false;
};

// kInvalidArgument naming the field for anything out of range.
absl::StatusOr<LflJobConfig> LflJobFromSpec(const v1::JobSpec& spec);
v1::JobSpec SpecFromLflJob(const LflJobConfig& job);
// What the secure aggregation is sized for: secagg_design_dropout, or omega.
double SecAggDesignDropout(const LflJobConfig& job);
// The host a device id is granted to, if any.
std::optional<std::string> GrantedHost(const LflJobConfig& job, uint64_t device);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_LFL_WIRE_LFL_JOB_CODEC_H_
