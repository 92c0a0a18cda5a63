// fedmf-hua-device: a device host running Hua S3 users (one process, many
// virtual users). Interim entry point for the Hua role until fedmf-device
// (the LFL device daemon) dispatches on the job's setting; the role itself is
// the hua_host / hua_role library.
#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "client-device/device_flags.h"
#include "client-device/hua_host.h"
#include "common/cli/command_line.h"
#include "common/log/log.h"
#include "common/log/log_setup.h"
#include "common/net/stop_signal.h"

int main(int argc, char** argv) {
  CLI::App app{"fedmf-hua-device — device host for Hua et al. S3 users", "fedmf-hua-device"};
  fedmf::cli::AddVersionFlag(app);
  fedmf::device::HuaHostOptions o;
  o.tls = {false, "certs", ""};
  std::string log_format = "text";
  app.add_option("--name", o.host, "this host's certificate name (role device)")->required();
  app.add_option("--server", o.server, "fedmf-server address host:port")->required();
  app.add_option("--aggregator", o.aggregator,
                 "fedmf-aggregator address this host dials (its own; never the job's)")
      ->required();
  app.add_option("--aggregator-name", o.aggregator_cert_name, "the aggregator's certificate name")
      ->capture_default_str();
  int64_t seed = -1;
  app.add_option("--seed", seed, "TEST ONLY: seed the users' noise and the held-out split");
  fedmf::device::PolicyFlags policy_flags;
  fedmf::device::AddPolicyFlags(app, policy_flags);
  app.add_option("--cert-dir", o.tls.cert_dir, "holds ca.crt, <name>.crt, <name>.key")
      ->capture_default_str();
  app.add_flag("--insecure", o.tls.insecure, "plaintext gRPC (testing only)");
  app.add_option("--devices-from", o.data_spec, "ratings of the hosted users, e.g. movielens:PATH")
      ->required();
  app.add_option("--first", o.first_user, "first hosted user (0-based dense id)")
      ->capture_default_str();
  app.add_option("--count", o.count, "number of hosted users")->capture_default_str();
  app.add_option("--hua-drop-at-iteration", o.drop_at_iteration,
                 "TEST: vanish after downloading this iteration's requests (0 = never)");
  app.add_option("--log-format", log_format, "text | json")->capture_default_str();
  if (std::optional<int> rc = fedmf::cli::ParseCommandLine(app, argc, argv)) return *rc;
  o.tls.name = o.host;
  if (auto s = fedmf::log::ConfigureLogging(log_format, "fedmf-hua-device"); !s.ok()) {
    std::cerr << "fedmf-hua-device: " << s.message() << "\n";
    return 2;
  }
  if (seed >= 0) {
    o.seed = static_cast<uint64_t>(seed);
    spdlog::warn("--seed {}: the users' noise and the split are reproducible — for tests only",
                 seed);
  }
  {
    auto policy = fedmf::device::ResolvePolicy(policy_flags);
    auto range = fedmf::device::ResolveRatingRange(policy_flags);
    if (!policy.ok() || !range.ok()) {
      std::cerr << "fedmf-hua-device: "
                << (policy.ok() ? range.status() : policy.status()).message() << "\n";
      return 2;
    }
    o.policy = *policy;
    o.rating_range = *range;
  }
  fedmf::net::InstallStopSignals();
  auto r = fedmf::device::RunHuaHost(o, fedmf::net::StopFlag());
  if (!r.ok()) {
    spdlog::error("host '{}': {}", o.host, r.status().message());
    return absl::IsCancelled(r.status()) ? 0 : 1;
  }
  const auto& t = r->traffic;
  spdlog::info(
      "host '{}': job '{}' done: {} users, test MSE {:.4f} MAE {:.4f} over {} ratings; per user "
      "and round {:.0f} B down, {:.0f} B up (users with <= 20 ratings: at most {} B down, {} B up)",
      o.host, r->job_id, r->users, r->test_mse, r->test_mae, r->test_count,
      t.user_rounds ? double(t.down_bytes) / t.user_rounds : 0.0,
      t.user_rounds ? double(t.up_bytes) / t.user_rounds : 0.0, t.max_down_le20, t.max_up_le20);
  return 0;
}
