// fedmf-party: a cross-silo party daemon. Dials out to the server; serves its
// own admin endpoint (recommendations, ledger) locally.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/base/allocator.h"
#include "common/base/mutex_checks.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/log/log.h"
#include "common/log/log_setup.h"
#include "common/metrics/host_port.h"
#include "common/metrics/http_exporter.h"
#include "common/net/credentials.h"
#include "common/net/grpc_logging.h"
#include "common/net/port_file.h"
#include "common/net/stop_signal.h"
#include "party/admin_service.h"
#include "party/party_agent.h"
#include "party/party_config.h"
#include "party/party_metrics.h"
#include "party/party_store.h"
#include "party/state_dir_lock.h"

namespace {

// The command line: the config file and an operator's (or a test's)
// overrides. Returns the exit code when the daemon must not start.
std::optional<int> LoadConfig(int argc, char** argv, fedmf::party::PartyConfig* out) {
  CLI::App app{"fedmf-party — a party of an FMF federation", "fedmf-party"};
  fedmf::cli::AddVersionFlag(app);
  std::string config_path, server, log_format;
  int metrics_port = -1;
  bool insecure = false;
  app.add_option("--config", config_path, "YAML config file (docs/configuration.md)")->required();
  app.add_option("--server", server, "override: server address");
  app.add_flag("--insecure", insecure, "plaintext gRPC without authentication (testing only)");
  app.add_option("--log-format", log_format, "override: text | json");
  app.add_option("--metrics-port", metrics_port,
                 "override: serve Prometheus GET /metrics on 0.0.0.0:PORT (0 = any free port)")
      ->check(CLI::Range(0, 65535));
  if (std::optional<int> rc = fedmf::cli::ParseCommandLine(app, argc, argv)) return rc;
  auto config = fedmf::party::LoadPartyConfig(config_path);
  if (!config.ok()) {
    std::cerr << "fedmf-party: " << config.status().message() << "\n";
    return fedmf::cli::kExitData;  // the config file it names is wrong
  }
  if (!server.empty()) config->server = server;
  if (insecure) config->tls.insecure = true;
  if (!log_format.empty()) config->log_format = log_format;
  if (metrics_port >= 0) config->metrics_listen = "0.0.0.0:" + std::to_string(metrics_port);
  if (auto s = fedmf::log::ConfigureLogging(config->log_format, config->name); !s.ok()) {
    std::cerr << "fedmf-party: " << s.message() << "\n";
    return 2;
  }
  fedmf::net::RouteGrpcLogsToSpdlog();  // one log format, gRPC's lines too
  *out = std::move(*config);
  return std::nullopt;
}

// The admin endpoint (ledger, recommendations, model export) for the
// configured operators; its bound port published to admin_port_file.
absl::StatusOr<std::unique_ptr<grpc::Server>> StartAdmin(
    const fedmf::party::PartyConfig& config,
    const std::shared_ptr<grpc::ServerCredentials>& admin_creds,
    fedmf::party::AdminService* admin) {
  if (!config.tls.insecure && config.admin_operators.empty()) {
    spdlog::warn(
        "admin_operators is empty: the admin endpoint refuses every caller (list the "
        "operator certificate names allowed to read this party's ledger and "
        "recommendations)");
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int admin_port = 0;
  builder.AddListeningPort(config.admin_listen, admin_creds, &admin_port);
  builder.RegisterService(admin);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || admin_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config.admin_listen));
  }
  if (!config.admin_port_file.empty()) {
    RETURN_IF_ERROR(fedmf::net::WritePortFile(config.admin_port_file, admin_port));
  }
  spdlog::info("party '{}' up: server {}, admin port {}", config.name, config.server, admin_port);
  return server;
}

}  // namespace

int main(int argc, char** argv) {
  fedmf::base::ConfigureAllocator("fedmf-party");  // before any thread exists
  fedmf::base::ConfigureMutexChecks();
  fedmf::party::PartyConfig config;
  if (std::optional<int> rc = LoadConfig(argc, argv, &config)) return *rc;
  std::error_code ec;
  std::filesystem::create_directories(config.state_dir, ec);
  // Held until the process exits (state_dir_lock.h).
  auto state_lock = fedmf::party::StateDirLock::Acquire(config.state_dir);
  if (!state_lock.ok()) {
    spdlog::critical("{}", state_lock.status().message());
    return 1;
  }
  auto store = fedmf::party::PartyStore::Open(
      (std::filesystem::path(config.state_dir) / (config.name + ".ledger.db")).string());
  if (!store.ok()) {
    spdlog::critical("{}", store.status().message());
    return 1;
  }
  auto channel = fedmf::net::MakeChannel(
      config.server, config.tls,
      fedmf::net::ExpectedPeer{config.server_name, fedmf::pki::Role::kServer});
  if (!channel.ok()) {
    spdlog::critical("TLS: {}", channel.status().message());
    return 2;
  }
  fedmf::party::PartyAgent agent(config, store->get(), *channel);
  if (auto s = agent.Init(); !s.ok()) {
    spdlog::critical("cannot start: {}", s.message());
    return fedmf::cli::IsDataError(s) ? fedmf::cli::kExitData : 1;  // 4: its data or catalogue file
  }
  auto admin_creds = fedmf::net::MakeServerCredentials(config.tls);
  if (!admin_creds.ok()) {
    spdlog::critical("TLS: {}", admin_creds.status().message());
    return 2;
  }
  fedmf::party::AdminService admin(&agent, config.tls.insecure, config.admin_operators);
  auto admin_server = StartAdmin(config, *admin_creds, &admin);
  if (!admin_server.ok()) {
    spdlog::critical("{}", admin_server.status().message());
    return 1;
  }
  fedmf::metrics::Registry registry;
  fedmf::party::PartyMetrics party_metrics(&registry);
  std::unique_ptr<fedmf::metrics::HttpExporter> exporter;
  if (!config.metrics_listen.empty()) {
    auto started =
        fedmf::metrics::HttpExporter::Start(config.metrics_listen, config.metrics_port_file,
                                            &registry, [&] { party_metrics.Refresh(&agent); });
    if (!started.ok()) {
      spdlog::critical("{}", started.status().message());
      return 1;
    }
    exporter = std::move(*started);
    spdlog::info("metrics on {}/metrics",
                 fedmf::metrics::BoundUrl(config.metrics_listen, exporter->port()));
  }
  fedmf::net::InstallStopSignals();
  agent.Run(&fedmf::net::StopFlag(), fedmf::net::StopFd());
  (*admin_server)->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}
