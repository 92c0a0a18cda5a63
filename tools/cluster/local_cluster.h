// A federation on loopback: a throw-away CA, one fedmf-server and S
// fedmf-party processes on ephemeral ports, driven through the operator API.
// `fedmf demo` and the integration tests use it.
#ifndef FEDMF_TOOLS_CLUSTER_LOCAL_CLUSTER_H_
#define FEDMF_TOOLS_CLUSTER_LOCAL_CLUSTER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "fedmf/v1/hua.grpc.pb.h"
#include "tools/cluster/process.h"

namespace fedmf::cluster {

struct PartyOptions {
  double max_epsilon = 10.0;
  std::vector<std::string> allowed_settings{"hfl", "vfl", "hfl-synsgd", "coupling"};
  std::string min_granularity = "rating";
  bool allow_non_private = true;
  // A local cluster (fedmf demo, tests) is one operator's simulation of a
  // federation: its parties report their test MSE. fedmf-party's default is off.
  bool report_metrics = true;
  std::string data_spec;  // empty = the cluster's
  // A file of the party's own (data.parties: 1, data.index: 0) instead of
  // its share of the cluster's data_spec.
  bool own_file = false;
  std::string catalogue;  // data.catalogue (HFL with own files)
  std::string server_name =
      "server";  // the server certificate name it expects (tests: a wrong one)
  // policy.allowed_partners; unset = every other party of the cluster (the
  // demo's parties train with each other and no one else).
  std::optional<std::vector<std::string>> allowed_partners;
  int32_t max_alignments_per_day = 3;  // policy.max_alignments_per_day
  double max_partner_list_ratio = 4;   // policy.max_partner_list_ratio
};

struct ClusterOptions {
  std::string bin_dir;   // where fedmf-server / fedmf-party live
  std::string work_dir;  // empty = a new temp dir (removed at the end)
  bool keep_work_dir = false;
  int parties = 3;
  std::string data_spec = "synthetic";
  std::string role = "hfl";  // the split the data follows: hfl | vfl
  uint64_t split_seed = 1;
  double test_fraction = 0.1;  // each party's data.test_fraction (coupling: the paper's 0.2)
  // Reproducibility: given to the processes the cluster starts (server.yaml
  // `seed`, each party's `noise_seed`), never put in a job. Unset = entropy.
  std::optional<uint64_t> seed;
  int32_t local_threads = 1;  // each party's local_threads (cores for local SGD)
  // The rating range every party declares (data.rating_min/rating_max).
  double rating_min = 1;
  double rating_max = 5;
  std::string vfl_split = "random";
  double poll_seconds = 0.5;
  double liveness_seconds = 3;
  bool insecure = false;
  bool metrics = false;    // the server serves /metrics on an ephemeral loopback port
  bool dashboard = false;  // the server serves its dashboard on an ephemeral loopback port
  std::string
      server_extra_yaml;  // tests: appended to server.yaml (e.g. "max_concurrent_polls: 2\n")
  std::map<int, PartyOptions> party_overrides;
  // Hua S3: certificates for fedmf-aggregator and `hua_hosts` device hosts
  // (HuaHostName(k), role device) running fedmf-device --setting hua-s3.
  int hua_hosts = 0;
  bool aggregator_record = false;  // fedmf-aggregator --record-for-tests
  // LFL: certificates for `lfl_hosts` device hosts (LflHostName(k), role
  // device) running fedmf-device (lfl_cluster.h).
  int lfl_hosts = 0;
  // Tests: the address parties and device hosts dial instead of the server's
  // own, e.g. a TCP proxy in front of it (tests/integration/tcp_proxy.h).
  // They may then be started before the server. Empty = the server's port.
  std::string dial_server;
  // Tests: per party, the address that party dials instead (one proxy per
  // party, so a test sees each party dial again). Overrides dial_server.
  std::map<int, std::string> party_dial_server;
};

// How one fedmf-device host of an LFL job is started (lfl_cluster.cc).
struct LflHostArgs {
  std::string data_spec;  // --devices-from
  int64_t first = 0;
  int64_t count = 1;
  std::string dropout = "0,0";
  int64_t seed = -1;      // >= 0: --seed (tests)
  std::string misbehave;  // tests: run fedmf-device-misbehaving --misbehave SPEC
  int threads = 1;
  // The host's own policy flags (--report-metrics, --max-epsilon, ...): the
  // default policy is the safe one, so a caller opts in explicitly.
  std::vector<std::string> policy_flags;
};

// The device-host policy flags under which a demo's own hosts accept the job
// the demo itself submits (the demo's user owns those hosts): metrics on, the
// budget raised to the job's whole-job epsilon if above the default,
// non-private jobs allowed only when the job is one.
std::vector<std::string> DemoDevicePolicyFlags(double whole_job_epsilon, int64_t iterations);

class LocalCluster {
 public:
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Create(ClusterOptions options);
  ~LocalCluster();

  absl::Status StartServer();
  void KillServer();  // SIGKILL
  // Starts the server again with the same database, on the port it bound
  // first, so parties started with `--server 127.0.0.1:<port>` find it again
  // (a crash + restart as an operator would do it). The port is pinned in
  // server.yaml. A server still running is SIGKILLed first.
  absl::Status RestartServer();
  absl::Status StartParty(int k);
  // Starts several at once and returns when each wrote its admin port (an
  // error names the party): SpawnParties, then AwaitParties.
  absl::Status StartParties(const std::vector<int>& ks);
  // The two halves, so that a caller can act (submit a job) while the
  // parties start: spawn returns at once, await as StartParties.
  absl::Status SpawnParties(const std::vector<int>& ks);
  absl::Status AwaitParties(const std::vector<int>& ks);
  void KillParty(int k);  // SIGKILL
  // The party's process id, -1 if not running (fault tests SIGSTOP/SIGCONT it).
  pid_t PartyPid(int k) const;
  // The server's process id, -1 if not running (tests read its /proc status).
  pid_t ServerPid() const;
  void StopAll();
  // Whether the process is alive (reaps it if it exited).
  bool ServerRunning();
  bool PartyRunning(int k);

  static std::string PartyName(int k);
  // Tests: options.dial_server set after Create, for a stand-in server that
  // needs this cluster's CA to start (tests/integration/hostile_server.h).
  void set_dial_server(std::string address) { options_.dial_server = std::move(address); }
  const std::string& work_dir() const { return work_dir_; }
  const std::string& cert_dir() const { return cert_dir_; }
  int server_port() const { return server_port_; }
  int server_metrics_port() const { return server_metrics_port_; }  // 0 unless options.metrics
  int server_dashboard_port() const {
    return server_dashboard_port_;
  }  // 0 unless options.dashboard
  int admin_port(int k) const;
  std::string ServerLog() const;

  absl::StatusOr<std::string> SubmitJob(v1::JobSpec spec);
  absl::StatusOr<v1::JobStatus> GetJob(const std::string& job_id);
  // Follows the job until it is FINISHED or FAILED; `on_status` sees every
  // answer. Each look after the first is the server's long poll
  // (GetJobRequest.wait_seconds): answered when the state changes or, with
  // `each_round`, when a round closes; a server that answers at once without
  // news is looked at again after a pause.
  absl::StatusOr<v1::JobStatus> WaitJob(
      const std::string& job_id, absl::Duration timeout,
      const std::function<void(const v1::JobStatus&)>& on_status = nullptr, bool each_round = true);
  absl::StatusOr<v1::LedgerResponse> PartyLedger(int k);

  // ---- Hua S3 (hua_cluster.cc)
  absl::Status StartAggregator();
  int aggregator_port() const { return aggregator_port_; }
  static std::string HuaHostName(int k);
  // Host k runs users [first, first + count) of `data_spec`; with
  // drop_at_iteration > 0 it vanishes mid-iteration (after downloading).
  // `extra_flags`: the host's policy, range and seed flags (--report-metrics,
  // --max-epsilon, --rating-range, --seed ...).
  absl::Status StartHuaHost(int k, const std::string& data_spec, int first, int count,
                            int drop_at_iteration = 0,
                            const std::vector<std::string>& extra_flags = {});
  bool HuaHostRunning(int k);
  // Test-only view of the aggregator (needs options.aggregator_record).
  absl::StatusOr<v1::HuaRecordedResponse> AggregatorRecorded(const std::string& job_id);

  // ---- LFL device hosts (lfl_cluster.cc)
  static std::string LflHostName(int k);
  absl::Status StartLflHost(int k, const LflHostArgs& args);
  bool LflHostRunning(int k);
  std::string LflHostLog(int k) const;
  absl::StatusOr<v1::RecommendResponse> Recommend(int k, const std::string& user, int top,
                                                  bool include_rated = false);

 private:
  explicit LocalCluster(ClusterOptions options) : options_(std::move(options)) {}
  absl::Status Prepare();
  absl::Status WriteServerConfig(const std::string& listen);
  absl::Status WritePartyConfig(int k);
  std::string AdminPortFile(int k) const;  // where party k writes its admin port
  absl::StatusOr<std::shared_ptr<grpc::Channel>> Channel(int port, const std::string& cert_name);
  // `req` may ask for the server's long poll (wait_seconds): the call's
  // deadline allows for it.
  static absl::StatusOr<v1::JobStatus> GetJobWith(v1::Operator::Stub& stub,
                                                  const v1::GetJobRequest& req);
  // The --server address parties and device hosts are started with.
  absl::StatusOr<std::string> DialServer() const;

  ClusterOptions options_;
  std::string work_dir_;
  std::string cert_dir_;
  bool owns_work_dir_ = false;
  std::optional<ChildProcess> server_;
  std::map<int, ChildProcess> parties_;
  int server_port_ = 0;
  int server_metrics_port_ = 0;
  int server_dashboard_port_ = 0;
  std::map<int, int> admin_ports_;
  std::optional<ChildProcess> aggregator_;
  std::map<int, ChildProcess> hua_hosts_;
  std::map<int, ChildProcess> lfl_hosts_;
  int aggregator_port_ = 0;
};

}  // namespace fedmf::cluster

#endif  // FEDMF_TOOLS_CLUSTER_LOCAL_CLUSTER_H_
