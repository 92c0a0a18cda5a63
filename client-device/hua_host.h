// A device host's Hua S3 loop over gRPC: waits for a hua-s3 job that grants
// it users, loads those users' ratings (the job's train/test split), registers
// their rated item sets, answers each round (requests from fedmf-server,
// masked reports to fedmf-aggregator, "done" to the server), and after the
// last iteration fetches the published V and reports its users' test error.
#ifndef FEDMF_CLIENT_DEVICE_HUA_HOST_H_
#define FEDMF_CLIENT_DEVICE_HUA_HOST_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "client-device/device_policy.h"
#include "common/data/ratings.h"
#include "common/net/credentials.h"

namespace fedmf::device {

struct HuaHostOptions {
  std::string host;    // this host's certificate name (role device)
  std::string server;  // fedmf-server address
  // The fedmf-aggregator this host dials and its certificate name: the
  // host's own configuration (required), never the job's spec.hua.aggregator.
  std::string aggregator;
  std::string server_cert_name = "server";
  std::string aggregator_cert_name = "aggregator";
  // The host's own policy and declared rating range (nullopt = the range
  // data_spec declares); a job that disagrees is refused.
  DevicePolicy policy;
  std::optional<data::RatingRange> rating_range;
  // Tests only (--seed): the users' noise streams and the test split.
  // Otherwise the OS CSPRNG and split seed 1; the job's seed is never used.
  std::optional<uint64_t> seed;
  net::TlsConfig tls;
  std::string data_spec;   // e.g. movielens:/path/u.data
  int32_t first_user = 0;  // the users (0-based dense ids) this host runs
  int32_t count = 1;
  // Testing: after downloading the first requests of an iteration >= `drop_at_iteration` the
  // host vanishes without reporting (returns kAborted), like a phone that
  // lost its connection mid-iteration. 0 = never.
  int32_t drop_at_iteration = 0;
  // Jobs this host already ran (finished or failed): their offers are not
  // taken again while the server still lists them (other hosts reporting).
  std::set<std::string> skip_jobs;
  // The host's privacy ledger (device_ledger.h; the LFL role's file): every
  // user is charged before each iteration's report leaves the host, and a
  // user whose budget (policy max_epsilon at its delta) the release would
  // exceed does not report.
  std::string ledger_path;
};

// Per (user, round) wire bytes of this host's users (serialized protobuf).
struct HuaHostTraffic {
  int64_t user_rounds = 0;
  int64_t down_bytes = 0, up_bytes = 0;
  int64_t max_down_le20 = 0, max_up_le20 = 0;  // users with <= 20 ratings
};

struct HuaHostResult {
  std::string job_id;
  int32_t users = 0;
  double epsilon_spent = 0;  // the largest epsilon of a user in the ledger after the job
  int64_t test_count = 0;
  double test_mse = 0, test_mae = 0;
  HuaHostTraffic traffic;
};

// The daemon's loop (fedmf-device --setting hua-s3): runs job after job until
// `stop`, calling `on_done` after each finished one. A failed job (aborted by
// the server, bad data for the grant) is logged and not taken again; only a
// refusal of this host itself (PermissionDenied before any job) ends the loop.
absl::Status RunHuaHostJobs(const HuaHostOptions& options, const std::atomic<bool>& stop,
                            const std::function<void(const HuaHostResult&)>& on_done);

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_HUA_HOST_H_
