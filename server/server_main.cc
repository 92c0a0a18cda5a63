// fedmf-server: the coordination server daemon.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>

#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "CLI/CLI.hpp"
#include "common/cli/command_line.h"
#include "common/log/log.h"
#include "common/log/log_setup.h"
#include "common/metrics/http_exporter.h"
#include "common/net/credentials.h"
#include "common/net/stop_signal.h"
#include "server/dashboard.h"
#include "server/fmf/coordinator_service.h"
#include "server/fmf/job_coordinator.h"
#include "server/fmf/server_store.h"
#include "server/hua/hua_service.h"
#include "server/lfl/device_service.h"
#include "server/lfl/lfl_coordinator.h"
#include "server/lfl/lfl_store.h"
#include "server/poll_limiter.h"
#include "server/server_config.h"
#include "server/server_metrics.h"

int main(int argc, char** argv) {
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
  if (std::optional<int> rc = fedmf::cli::ParseCommandLine(app, argc, argv)) return *rc;

  fedmf::server::ServerConfig config;
  if (!config_path.empty()) {
    auto loaded = fedmf::server::LoadServerConfig(config_path);
    if (!loaded.ok()) {
      std::cerr << "fedmf-server: " << loaded.status().message() << "\n";
      return fedmf::cli::kExitData;  // the config file it names is wrong
    }
    config = std::move(*loaded);
  }
  if (!listen.empty()) config.listen = listen;
  if (!port_file.empty()) config.port_file = port_file;
  if (!database.empty()) config.database = database;
  if (insecure) config.tls.insecure = true;
  if (!log_format.empty()) config.log_format = log_format;
  if (metrics_port >= 0) config.metrics_listen = "0.0.0.0:" + std::to_string(metrics_port);
  if (dashboard_port >= 0) config.dashboard_listen = "127.0.0.1:" + std::to_string(dashboard_port);
  if (auto s = fedmf::log::ConfigureLogging(config.log_format, "fedmf-server"); !s.ok()) {
    std::cerr << "fedmf-server: " << s.message() << "\n";
    return 2;
  }

  auto store = fedmf::server::ServerStore::Open(config.database);
  if (!store.ok()) {
    spdlog::critical("{}", store.status().message());
    return 1;
  }
  auto creds = fedmf::net::MakeServerCredentials(config.tls);
  if (!creds.ok()) {
    spdlog::critical("TLS: {}", creds.status().message());
    return 2;
  }
  fedmf::metrics::Registry registry;
  fedmf::server::ServerMetrics server_metrics(&registry);
  config.coordinator.on_round = [&server_metrics](const fedmf::v1::RoundRecord& r) {
    server_metrics.ObserveRound(r);
  };
  fedmf::server::JobCoordinator coordinator(store->get(), config.coordinator);
  fedmf::server::TrafficCounters traffic;
  fedmf::server::CoordinatorService coordinator_service(&coordinator, config.tls.insecure,
                                                        config.max_chunk_values, &traffic);
  fedmf::server::OperatorService operator_service(&coordinator, config.tls.insecure);
  // Hua et al. S3 jobs: devices speak HuaRecommender, the server dials fedmf-aggregator.
  fedmf::server::HuaRunnerOptions hua_options;
  hua_options.poll = config.coordinator.poll;
  hua_options.liveness = config.coordinator.liveness;
  fedmf::server::HuaRunner hua_runner(hua_options,
                                      fedmf::server::MakeGrpcAggregatorLinks(config.tls));
  fedmf::server::HuaRecommenderService hua_service(&hua_runner, config.tls.insecure);
  operator_service.set_hua(&hua_runner);
  // LFL-SGDMF jobs: device hosts speak DeviceCoordinator (device.proto).
  auto lfl_store = fedmf::server::LflStore::Open(config.database);
  if (!lfl_store.ok()) {
    spdlog::critical("{}", lfl_store.status().message());
    return 1;
  }
  fedmf::server::LflCoordinator lfl_coordinator(
      lfl_store->get(),
      {config.coordinator.poll, config.coordinator.liveness, config.coordinator.limits});
  fedmf::server::DeviceService device_service(&lfl_coordinator, config.tls.insecure,
                                              config.max_chunk_values, &traffic);
  operator_service.set_lfl(&lfl_coordinator);
  // One cap shared by every long-poll (parties, LFL hosts, Hua hosts).
  fedmf::server::PollLimiter poll_limiter(config.max_concurrent_polls);
  coordinator_service.set_poll_limiter(&poll_limiter);
  device_service.set_poll_limiter(&poll_limiter);
  hua_service.set_poll_limiter(&poll_limiter);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, *creds, &port);
  builder.RegisterService(&coordinator_service);
  builder.RegisterService(&operator_service);
  builder.RegisterService(&hua_service);
  builder.RegisterService(&device_service);
  builder.SetMaxReceiveMessageSize(8 << 20);
  builder.SetMaxSendMessageSize(8 << 20);
  // A call that would need a thread beyond max_threads is refused with
  // RESOURCE_EXHAUSTED by gRPC itself rather than queued without bound.
  grpc::ResourceQuota quota("fedmf-server");
  quota.SetMaxThreads(config.max_threads);
  builder.SetResourceQuota(quota);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::critical("cannot listen on {}", config.listen);
    return 1;
  }
  hua_runner.Start();
  if (auto s = lfl_coordinator.Start(); !s.ok()) {
    spdlog::critical("cannot open the LFL jobs in {}: {}", config.database, s.message());
    return 1;
  }
  if (auto s = coordinator.Start(); !s.ok()) {
    spdlog::critical("cannot resume from {}: {}", config.database, s.message());
    return 1;
  }
  if (!config.port_file.empty()) {
    const std::string tmp = config.port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::rename(tmp.c_str(), config.port_file.c_str());
  }
  std::unique_ptr<fedmf::metrics::HttpExporter> exporter;
  if (!config.metrics_listen.empty()) {
    auto started = fedmf::metrics::HttpExporter::Start(
        config.metrics_listen, config.metrics_port_file, &registry,
        [&] { server_metrics.Refresh(&coordinator, traffic); });
    if (!started.ok()) {
      spdlog::critical("{}", started.status().message());
      return 1;
    }
    exporter = std::move(*started);
    spdlog::info("metrics on http://{}/metrics (port {})", config.metrics_listen, exporter->port());
  }
  std::unique_ptr<fedmf::metrics::HttpServer> dashboard;
  if (!config.dashboard_listen.empty()) {
    auto started =
        fedmf::server::StartDashboard(config.dashboard_listen, config.dashboard_port_file,
                                      &coordinator, &lfl_coordinator, &hua_runner);
    if (!started.ok()) {
      spdlog::critical("{}", started.status().message());
      return 1;
    }
    dashboard = std::move(*started);
    spdlog::info("dashboard on http://{} (port {})", config.dashboard_listen, dashboard->port());
  }
  spdlog::info("fedmf-server listening on port {} ({}), database {}", port,
               config.tls.insecure ? "INSECURE" : "mTLS", config.database);

  fedmf::net::InstallStopSignals();
  fedmf::net::WaitForStop();
  spdlog::info("shutting down");
  hua_runner.Stop();
  lfl_coordinator.Stop();
  coordinator.Stop();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
