// fedmf-device's command line and runners (device_command.h).
#include "client-device/device_command.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client-device/device_flags.h"
#include "client-device/hua_host.h"
#include "client-device/lfl_host.h"
#include "common/cli/command_line.h"
#include "common/log/log.h"
#include "common/log/log_setup.h"
#include "common/net/grpc_logging.h"
#include "common/net/stop_signal.h"

namespace fedmf::device {
namespace {

struct Flags {
  std::string setting = "lfl";
  std::string dropout = "0,0";
  int64_t seed = -1;
  std::string aggregator;  // hua-s3: the aggregator this host dials (its own config)
  std::string aggregator_name = "aggregator";
  int32_t hua_drop_at_iteration = 0;  // hua-s3, TEST: vanish mid-iteration
  fedmf::device::LflHostOptions lfl;
};

int RunLfl(Flags& f) {
  fedmf::device::LflHostOptions& o = f.lfl;
  std::vector<std::string> parts = absl::StrSplit(f.dropout, ',');
  if (parts.size() != 2 || !absl::SimpleAtod(parts[0], &o.role.dropout_round1) ||
      !absl::SimpleAtod(parts[1], &o.role.dropout_round2) ||
      !(o.role.dropout_round1 >= 0 && o.role.dropout_round1 < 1) ||
      !(o.role.dropout_round2 >= 0 && o.role.dropout_round2 < 1)) {
    std::cerr << "fedmf-device: --dropout '" << f.dropout
              << "': expected P1,P2 with each in [0, 1), e.g. 0.1,0.05\n";
    return 2;
  }
  if (f.seed >= 0) o.role.seed = static_cast<uint64_t>(f.seed);
  if (o.ledger_path.empty()) o.ledger_path = o.host + ".ledger.db";
  absl::Status s = fedmf::device::RunLflHost(o, net::StopFlag());
  if (!s.ok() && !absl::IsCancelled(s)) {
    spdlog::error("host '{}': {}", o.host, s.message());
    return 1;
  }
  return 0;
}

// Hua S3 users: the same host, server, TLS, users and policy as the LFL
// role; the aggregator is this host's own --aggregator (never the job's).
int RunHua(Flags& f) {
  const fedmf::device::LflHostOptions& o = f.lfl;
  fedmf::device::HuaHostOptions h;
  h.host = o.host;
  h.server = o.server;
  h.server_cert_name = o.server_cert_name;
  h.aggregator = f.aggregator;
  h.aggregator_cert_name = f.aggregator_name;
  h.tls = o.tls;
  h.policy = o.policy;
  h.rating_range = o.rating_range;
  if (f.seed >= 0) h.seed = static_cast<uint64_t>(f.seed);
  if (h.aggregator.empty()) {
    std::cerr << "fedmf-device: --setting hua-s3 needs --aggregator HOST:PORT (the host dials "
                 "only the aggregator its own configuration names)\n";
    return 2;
  }
  h.data_spec = o.devices_from;
  h.first_user = static_cast<int32_t>(o.first);
  h.count = static_cast<int32_t>(o.count);
  h.drop_at_iteration = f.hua_drop_at_iteration;
  // The same ledger as the LFL role: a user's spend composes over both.
  h.ledger_path = o.ledger_path.empty() ? o.host + ".ledger.db" : o.ledger_path;
  absl::Status s =
      fedmf::device::RunHuaHostJobs(h, net::StopFlag(), [&](const fedmf::device::HuaHostResult& r) {
        spdlog::info(
            "host '{}': hua-s3 job '{}' done: {} users, test MSE {:.4f} MAE {:.4f} over "
            "{} ratings; largest epsilon of a user in its ledger {}",
            h.host, r.job_id, r.users, r.test_mse, r.test_mae, r.test_count, r.epsilon_spent);
      });
  if (!s.ok() && !absl::IsCancelled(s)) {
    spdlog::error("host '{}' (hua-s3): {}", h.host, s.message());
    return 1;
  }
  return 0;
}

}  // namespace

int RunDeviceCommand(int argc, char** argv, const DeviceCommandExtension& extend) {
  CLI::App app{"fedmf-device — a host of virtual devices for cross-device jobs", "fedmf-device"};
  fedmf::cli::AddVersionFlag(app);
  Flags f;
  fedmf::device::LflHostOptions& o = f.lfl;
  o.tls = {false, "certs", ""};
  std::string log_format = "text";
  app.add_option("--setting", f.setting, "the devices' roles: lfl | hua-s3 | lfl,hua-s3")
      ->capture_default_str();
  app.add_option("--name", o.host, "this host's certificate name (role device)")->required();
  app.add_option("--server", o.server, "fedmf-server address host:port")->required();
  app.add_option("--server-name", o.server_cert_name, "the server's certificate name")
      ->capture_default_str();
  app.add_option("--cert-dir", o.tls.cert_dir, "holds ca.crt, <name>.crt, <name>.key")
      ->capture_default_str();
  app.add_flag("--insecure", o.tls.insecure,
               "plaintext gRPC without authentication (testing only)");
  app.add_option("--devices-from", o.devices_from,
                 "the users' ratings: movielens:PATH | csv:PATH | synthetic[:k=v,...]")
      ->required();
  app.add_option("--first", o.first, "first hosted device (0-based user index)")
      ->capture_default_str();
  app.add_option("--count", o.count, "number of hosted devices")->capture_default_str();
  app.add_option("--ledger", o.ledger_path, "SQLite privacy ledger (default <name>.ledger.db)");
  app.add_option("--dropout", f.dropout,
                 "P1,P2: probability a device vanishes in round 1 / round 2 of an iteration")
      ->capture_default_str();
  app.add_option("--seed", f.seed,
                 "TEST ONLY: seed keys, masks, dropouts, the devices' noise "
                 "and the held-out split (never taken from the job)");
  app.add_option("--aggregator", f.aggregator,
                 "hua-s3: the fedmf-aggregator address this host dials (required for hua-s3)");
  app.add_option("--aggregator-name", f.aggregator_name, "the aggregator's certificate name")
      ->capture_default_str();
  app.add_option("--hua-drop-at-iteration", f.hua_drop_at_iteration,
                 "hua-s3, TEST: vanish after downloading this iteration's requests (0 = never)");
  fedmf::device::PolicyFlags policy_flags;
  fedmf::device::AddPolicyFlags(app, policy_flags);
  app.add_option("--threads", o.role.threads, "worker threads for the devices' work")
      ->capture_default_str();
  app.add_flag("--exit-after-job", o.exit_after_job, "exit once a job finished or failed");
  app.add_option("--log-format", log_format, "text | json")->capture_default_str();
  if (extend) extend(app, o);
  if (std::optional<int> rc = fedmf::cli::ParseCommandLine(app, argc, argv)) return *rc;
  o.tls.name = o.host;
  if (auto s = fedmf::log::ConfigureLogging(log_format, "fedmf-device"); !s.ok()) {
    std::cerr << "fedmf-device: " << s.message() << "\n";
    return 2;
  }
  fedmf::net::RouteGrpcLogsToSpdlog();  // one log format, gRPC's lines too
  if (o.tls.insecure) spdlog::warn("--insecure: plaintext gRPC, no authentication (testing only)");
  if (f.seed >= 0) {
    spdlog::warn("--seed {}: keys, masks, noise and the split are reproducible — for tests only",
                 f.seed);
  }
  {
    auto policy = fedmf::device::ResolvePolicy(policy_flags);
    auto range = fedmf::device::ResolveRatingRange(policy_flags);
    if (!policy.ok() || !range.ok()) {
      std::cerr << "fedmf-device: " << (policy.ok() ? range.status() : policy.status()).message()
                << "\n";
      return 2;
    }
    o.policy = *policy;
    o.rating_range = *range;
  }
  net::InstallStopSignals();
  // One runner per setting; another role plugs in here.
  const std::map<std::string, std::function<int(Flags&)>> runners{{"lfl", RunLfl},
                                                                  {"hua-s3", RunHua}};
  std::vector<std::string> settings = absl::StrSplit(f.setting, ',');
  for (const std::string& name : settings) {
    if (runners.count(name) == 0) {
      std::cerr << "fedmf-device: --setting '" << f.setting
                << "': expected lfl, hua-s3 or both (lfl,hua-s3)\n";
      return 2;
    }
  }
  if (settings.size() == 1) return runners.at(settings[0])(f);
  // Several roles: one thread each, with its own copy of the flags; the
  // first role to fail stops the others, so a supervisor restarts the host.
  std::vector<int> rcs(settings.size(), 0);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < settings.size(); ++k) {
    threads.emplace_back([&, k, copy = f]() mutable {
      rcs[k] = runners.at(settings[k])(copy);
      if (rcs[k] != 0) net::RequestStop();
    });
  }
  for (std::thread& t : threads) t.join();
  return *std::max_element(rcs.begin(), rcs.end());
}

}  // namespace fedmf::device
