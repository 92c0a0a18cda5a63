// A device host's LFL-SGDMF loop over gRPC (proto/fedmf/v1/device.proto):
// dials out to fedmf-server over mTLS, long-polls for tasks with its device
// ids, and runs them through LflRole (Stage 1, every secure-aggregation
// phase of both rounds of each iteration, Stage 3), reconnecting with
// exponential backoff when the server is away.
#ifndef FEDMF_CLIENT_DEVICE_LFL_HOST_H_
#define FEDMF_CLIENT_DEVICE_LFL_HOST_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client-device/device_policy.h"
#include "client-device/lfl_role.h"
#include "common/data/ratings.h"
#include "common/net/credentials.h"
#include "fedmf/v1/device.pb.h"

namespace fedmf::device {

struct LflHostOptions {
  std::string host;    // certificate name (role device)
  std::string server;  // fedmf-server address
  std::string server_cert_name = "server";
  net::TlsConfig tls;
  std::string devices_from;  // movielens:PATH | synthetic[:...] | csv:PATH
  int64_t first = 0;         // devices [first, first + count): users in the
  int64_t count = 1;         //   dataset's dense order (lfl::SimulateLfl's)
  std::string ledger_path;   // SQLite file of the host's device ledger
  // The host's own policy and declared rating range (nullopt = the range
  // --devices-from declares): every job and iteration is checked against
  // them; R for clipping and sensitivity is the host's, never the job's.
  DevicePolicy policy;
  std::optional<data::RatingRange> rating_range;
  LflRoleOptions role;
  // Tests only; fedmf-device never sets them (the misbehaving test host,
  // tests/integration/misbehaving_device.h, does): called with every batch
  // before it is submitted, and with every phase task before it is handled.
  std::function<void(const v1::BatchHeader&, std::vector<v1::DeviceMessage>&)> before_submit;
  std::function<void(const v1::DeviceTask&)> before_phase;
  bool exit_after_job = false;  // return once a job finished or failed
  double max_backoff_seconds = 10;
};

// Runs until `stop` (or, with exit_after_job, the end of one job).
absl::Status RunLflHost(const LflHostOptions& options, const std::atomic<bool>& stop);

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_LFL_HOST_H_
