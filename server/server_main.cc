// fedmf-server: the coordination server daemon.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/base/allocator.h"
#include "common/base/mutex_checks.h"
#include "common/cli/command_line.h"
#include "common/log/log.h"
#include "common/log/log_setup.h"
#include "common/metrics/host_port.h"
#include "common/metrics/http_exporter.h"
#include "common/net/credentials.h"
#include "common/net/grpc_logging.h"
#include "common/net/port_file.h"
#include "common/net/stop_signal.h"
#include "server/call_governor.h"
#include "server/dashboard.h"
#include "server/fmf/coordinator_service.h"
#include "server/fmf/job_coordinator.h"
#include "server/fmf/server_store.h"
#include "server/hua/hua_service.h"
#include "server/job_runner.h"
#include "server/lfl/device_service.h"
#include "server/lfl/lfl_coordinator.h"
#include "server/lfl/lfl_store.h"
#include "server/operator_service.h"
#include "server/poll_limiter.h"
#include "server/server_config.h"
#include "server/server_metrics.h"

namespace {

using fedmf::server::ServerConfig;

// Request threads kept waiting for calls between bursts (Daemon::Serve).
constexpr int32_t kMaxIdleThreads = 64;

// The command line: a config file and the overrides an operator (or a test)
// gives on top of it. Returns the exit code when the daemon must not start.
std::optional<int> LoadConfig(int argc, char** argv, ServerConfig* config) {
  CLI::App app{"fedmf-server — FMF coordination server", "fedmf-server"};
  fedmf::cli::AddVersionFlag(app);
  std::string config_path;
  std::string listen, port_file, database, log_format;
  int metrics_port = -1;
  int dashboard_port = -1;
  bool insecure = false;
  app.add_option("--config", config_path, "YAML config file (docs/configuration.md)");
  app.add_option("--listen", listen, "override: address:port to listen on (port 0 = any)");
  app.add_option("--port-file", port_file, "override: write the bound port here");
  app.add_option("--database", database, "override: SQLite database path");
  app.add_flag("--insecure", insecure, "plaintext gRPC without authentication (testing only)");
  app.add_option("--log-format", log_format, "override: text | json");
  app.add_option("--metrics-port", metrics_port,
                 "override: serve Prometheus GET /metrics on 0.0.0.0:PORT (0 = any free port)")
      ->check(CLI::Range(0, 65535));
  app.add_option(
         "--dashboard-port", dashboard_port,
         "override: serve the read-only web dashboard on 127.0.0.1:PORT (0 = any free port)")
      ->check(CLI::Range(0, 65535));
  if (std::optional<int> rc = fedmf::cli::ParseCommandLine(app, argc, argv)) return rc;
  if (!config_path.empty()) {
    auto loaded = fedmf::server::LoadServerConfig(config_path);
    if (!loaded.ok()) {
      std::cerr << "fedmf-server: " << loaded.status().message() << "\n";
      return fedmf::cli::kExitData;  // the config file it names is wrong
    }
    *config = std::move(*loaded);
  }
  if (!listen.empty()) config->listen = listen;
  if (!port_file.empty()) config->port_file = port_file;
  if (!database.empty()) config->database = database;
  if (insecure) config->tls.insecure = true;
  if (!log_format.empty()) config->log_format = log_format;
  if (metrics_port >= 0) config->metrics_listen = "0.0.0.0:" + std::to_string(metrics_port);
  if (dashboard_port >= 0) {
    config->dashboard_listen = "127.0.0.1:" + std::to_string(dashboard_port);
  }
  if (auto s = fedmf::log::ConfigureLogging(config->log_format, "fedmf-server"); !s.ok()) {
    std::cerr << "fedmf-server: " << s.message() << "\n";
    return 2;
  }
  fedmf::net::RouteGrpcLogsToSpdlog();  // one log format, gRPC's lines too
  return std::nullopt;
}

// Everything the daemon runs, wired together; owns it all. Members are
// declared in construction order (each may point at the ones above it).
class Daemon {
 public:
  explicit Daemon(ServerConfig config) : config_(std::move(config)) {}

  // Opens the stores and wires the three protocols' coordinators and gRPC
  // services; nothing listens yet. Returns the exit code on failure.
  std::optional<int> Wire();
  // Listens, resumes the stored jobs, starts the HTTP endpoints, and serves
  // until SIGINT/SIGTERM. Returns the exit code.
  int Serve();

 private:
  std::optional<int> StartJobs();
  std::optional<int> StartHttp();
  void Shutdown();

  ServerConfig config_;
  std::unique_ptr<fedmf::server::ServerStore> store_;
  std::unique_ptr<fedmf::server::ServerStore> history_store_;  // job views, without the lock
  std::unique_ptr<fedmf::server::LflStore> lfl_store_;
  std::shared_ptr<grpc::ServerCredentials> creds_;
  fedmf::metrics::Registry registry_;
  std::unique_ptr<fedmf::server::ServerMetrics> server_metrics_;
  fedmf::server::TrafficCounters traffic_;
  std::unique_ptr<fedmf::server::JobCoordinator> coordinator_;
  std::unique_ptr<fedmf::server::CoordinatorService> coordinator_service_;
  std::unique_ptr<fedmf::server::OperatorService> operator_service_;
  std::unique_ptr<fedmf::server::HuaRunner> hua_runner_;
  std::unique_ptr<fedmf::server::HuaRecommenderService> hua_service_;
  std::unique_ptr<fedmf::server::LflCoordinator> lfl_coordinator_;
  std::unique_ptr<fedmf::server::DeviceService> device_service_;
  std::vector<fedmf::server::JobRunner*> runners_;  // the above's, for the operator and dashboard
  // One long-poll cap per pool of callers, so that operators' watches, the
  // parties' GetTask and the device hosts' polls never take each other's.
  std::unique_ptr<fedmf::server::PollLimiter> operator_polls_, party_polls_, device_polls_;
  std::unique_ptr<fedmf::server::CallGovernor> governor_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::unique_ptr<fedmf::metrics::HttpExporter> exporter_;
  std::unique_ptr<fedmf::metrics::HttpServer> dashboard_;
};

std::optional<int> Daemon::Wire() {
  auto store = fedmf::server::ServerStore::Open(config_.database);
  if (!store.ok()) {
    spdlog::critical("{}", store.status().message());
    return 1;
  }
  store_ = std::move(*store);
  auto creds = fedmf::net::MakeServerCredentials(config_.tls);
  if (!creds.ok()) {
    spdlog::critical("TLS: {}", creds.status().message());
    return 2;
  }
  creds_ = *creds;
  server_metrics_ = std::make_unique<fedmf::server::ServerMetrics>(&registry_);
  config_.coordinator.on_round = [m = server_metrics_.get()](const fedmf::v1::RoundRecord& r) {
    m->ObserveRound(r);
  };
  const bool insecure = config_.tls.insecure;
  coordinator_ = std::make_unique<fedmf::server::JobCoordinator>(store_.get(), config_.coordinator);
  auto history = fedmf::server::ServerStore::Open(config_.database);
  if (!history.ok()) {
    spdlog::critical("{}", history.status().message());
    return 1;
  }
  history_store_ = std::move(*history);
  coordinator_->set_history_store(history_store_.get());
  coordinator_service_ = std::make_unique<fedmf::server::CoordinatorService>(
      coordinator_.get(), insecure, config_.max_chunk_values, &traffic_);
  // Hua et al. S3 jobs: devices speak HuaRecommender, the server dials fedmf-aggregator.
  fedmf::server::HuaRunnerOptions hua_options;
  hua_options.poll = config_.coordinator.poll;
  hua_options.liveness = config_.coordinator.liveness;
  hua_runner_ = std::make_unique<fedmf::server::HuaRunner>(
      hua_options, fedmf::server::MakeGrpcAggregatorLinks(config_.tls));
  hua_service_ =
      std::make_unique<fedmf::server::HuaRecommenderService>(hua_runner_.get(), insecure);
  // LFL-SGDMF jobs: device hosts speak DeviceCoordinator (device.proto).
  auto lfl_store = fedmf::server::LflStore::Open(config_.database);
  if (!lfl_store.ok()) {
    spdlog::critical("{}", lfl_store.status().message());
    return 1;
  }
  lfl_store_ = std::move(*lfl_store);
  lfl_coordinator_ = std::make_unique<fedmf::server::LflCoordinator>(
      lfl_store_.get(),
      fedmf::server::LflCoordinatorOptions{
          config_.coordinator.poll, config_.coordinator.liveness, config_.coordinator.limits,
          static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))});
  device_service_ = std::make_unique<fedmf::server::DeviceService>(
      lfl_coordinator_.get(), insecure, config_.max_chunk_values, &traffic_);
  // Every protocol's runner, in the order jobs are listed (the first also
  // takes the settings no runner claims, and refuses them): a new protocol
  // is one more line here.
  runners_ = {coordinator_.get(), lfl_coordinator_.get(), hua_runner_.get()};
  operator_service_ = std::make_unique<fedmf::server::OperatorService>(
      runners_, config_.coordinator.limits, insecure);
  operator_service_->set_admin_operators(config_.admin_operators);
  operator_polls_ =
      std::make_unique<fedmf::server::PollLimiter>(config_.max_concurrent_polls, "operators");
  party_polls_ =
      std::make_unique<fedmf::server::PollLimiter>(config_.max_concurrent_polls, "parties");
  device_polls_ =
      std::make_unique<fedmf::server::PollLimiter>(config_.max_concurrent_polls, "device hosts");
  coordinator_service_->set_poll_limiter(party_polls_.get());
  device_service_->set_poll_limiter(device_polls_.get());
  hua_service_->set_poll_limiter(device_polls_.get());
  operator_service_->set_poll_limiter(operator_polls_.get());
  // Every call counted against its caller's pool and cut off on a deadline
  // (server/call_governor.h); installed before the gRPC server exists.
  governor_ = std::make_unique<fedmf::server::CallGovernor>(config_.calls, insecure);
  fedmf::server::CallGovernor::Install(governor_.get());
  return std::nullopt;
}

int Daemon::Serve() {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config_.listen, creds_, &port_);
  builder.RegisterService(coordinator_service_.get());
  builder.RegisterService(operator_service_.get());
  builder.RegisterService(hua_service_.get());
  builder.RegisterService(device_service_.get());
  builder.SetMaxReceiveMessageSize(8 << 20);
  builder.SetMaxSendMessageSize(8 << 20);
  // A call that would need a thread beyond max_threads is refused with
  // RESOURCE_EXHAUSTED by gRPC itself rather than queued without bound.
  grpc::ResourceQuota quota("fedmf-server");
  quota.SetMaxThreads(config_.max_threads);
  builder.SetResourceQuota(quota);
  // gRPC's sync server keeps at most MAX_POLLERS idle threads (default 2)
  // and starts a thread whenever a poller picks up a call; with every party
  // in a long poll, each round's calls then created and destroyed about one
  // thread each (1,300+ threads in one 100-round demo, clone/exit/page
  // faults ~10% of the server's CPU). Idle threads cost only their stacks.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                              std::min(config_.max_threads, kMaxIdleThreads));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    spdlog::critical("cannot listen on {}", config_.listen);
    return 1;
  }
  if (std::optional<int> rc = StartJobs()) return *rc;
  if (!config_.port_file.empty()) {
    if (auto w = fedmf::net::WritePortFile(config_.port_file, port_); !w.ok()) {
      spdlog::critical("{}", w.message());
      return 1;
    }
  }
  if (std::optional<int> rc = StartHttp()) return *rc;
  spdlog::info("fedmf-server listening on port {} ({}), database {}", port_,
               config_.tls.insecure ? "INSECURE" : "mTLS", config_.database);
  fedmf::net::InstallStopSignals();
  fedmf::net::WaitForStop();
  Shutdown();
  return 0;
}

std::optional<int> Daemon::StartJobs() {
  // The device runners first, then the cross-silo one (as before the seam).
  for (auto it = runners_.rbegin(); it != runners_.rend(); ++it) {
    if (auto s = (*it)->Start(); !s.ok()) {
      spdlog::critical("cannot resume the {} jobs from {}: {}", (*it)->kind(), config_.database,
                       s.message());
      return 1;
    }
  }
  return std::nullopt;
}

std::optional<int> Daemon::StartHttp() {
  if (!config_.metrics_listen.empty()) {
    auto started = fedmf::metrics::HttpExporter::Start(
        config_.metrics_listen, config_.metrics_port_file, &registry_, [this] {
          server_metrics_->Refresh(coordinator_.get(), traffic_, governor_.get(),
                                   coordinator_service_->upload_bytes_in_use());
        });
    if (!started.ok()) {
      spdlog::critical("{}", started.status().message());
      return 1;
    }
    exporter_ = std::move(*started);
    spdlog::info("metrics on {}/metrics",
                 fedmf::metrics::BoundUrl(config_.metrics_listen, exporter_->port()));
  }
  if (!config_.dashboard_listen.empty()) {
    fedmf::server::DashboardAccess access;
    if (auto hp = fedmf::metrics::SplitHostPort("dashboard", config_.dashboard_listen); hp.ok()) {
      access.listen_host = hp->first;
    }
    access.hosts = config_.dashboard_hosts;
    if (!config_.dashboard_token_file.empty()) {
      std::ifstream in(config_.dashboard_token_file);
      std::string token;
      std::getline(in, token);
      while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
        token.pop_back();
      }
      if (!in.good() && token.empty()) {
        spdlog::critical("dashboard_token_file {}: cannot read a token from it",
                         config_.dashboard_token_file);
        return 1;
      }
      if (token.size() < 16) {
        spdlog::critical("dashboard_token_file {}: the token must be at least 16 characters",
                         config_.dashboard_token_file);
        return 1;
      }
      access.token = std::move(token);
    }
    auto started = fedmf::server::StartDashboard(
        config_.dashboard_listen, config_.dashboard_port_file, std::move(access), runners_);
    if (!started.ok()) {
      spdlog::critical("{}", started.status().message());
      return 1;
    }
    dashboard_ = std::move(*started);
    spdlog::info("dashboard on {}/",
                 fedmf::metrics::BoundUrl(config_.dashboard_listen, dashboard_->port()));
  }
  return std::nullopt;
}

void Daemon::Shutdown() {
  spdlog::info("shutting down");
  for (auto it = runners_.rbegin(); it != runners_.rend(); ++it) (*it)->Stop();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  fedmf::server::CallGovernor::Install(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  fedmf::base::ConfigureAllocator("fedmf-server");  // before any thread exists
  fedmf::base::ConfigureMutexChecks();
  ServerConfig config;
  if (std::optional<int> rc = LoadConfig(argc, argv, &config)) return *rc;
  Daemon daemon(std::move(config));
  if (std::optional<int> rc = daemon.Wire()) return *rc;
  return daemon.Serve();
}
