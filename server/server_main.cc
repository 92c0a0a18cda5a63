// fedmf-server: the coordination server daemon.
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>

#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/grpcpp.h>

#include "CLI/CLI.hpp"
#include "common/net/credentials.h"
#include "server/coordinator_service.h"
#include "server/job_coordinator.h"
#include "server/server_config.h"
#include "server/server_store.h"
#include "common/log/log.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fedmf-server — FMF coordination server"};
  std::string config_path;
  std::string listen, port_file, database;
  bool insecure = false;
  app.add_option("--config", config_path, "YAML config file (docs/configuration.md)");
  app.add_option("--listen", listen, "override: address:port to listen on (port 0 = any)");
  app.add_option("--port-file", port_file, "override: write the bound port here");
  app.add_option("--database", database, "override: SQLite database path");
  app.add_flag("--insecure", insecure, "plaintext gRPC without authentication (testing only)");
  CLI11_PARSE(app, argc, argv);

  fedmf::server::ServerConfig config;
  if (!config_path.empty()) {
    auto loaded = fedmf::server::LoadServerConfig(config_path);
    if (!loaded.ok()) {
      std::cerr << "fedmf-server: " << loaded.status().message() << "\n";
      return 2;
    }
    config = std::move(*loaded);
  }
  if (!listen.empty()) config.listen = listen;
  if (!port_file.empty()) config.port_file = port_file;
  if (!database.empty()) config.database = database;
  if (insecure) config.tls.insecure = true;
  if (config.log_format == "json") {
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e","level":"%l","msg":"%v"})");
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
  fedmf::server::JobCoordinator coordinator(store->get(), config.coordinator);
  fedmf::server::TrafficCounters traffic;
  fedmf::server::CoordinatorService coordinator_service(&coordinator, config.tls.insecure,
                                                        config.max_chunk_values, &traffic);
  fedmf::server::OperatorService operator_service(&coordinator, config.tls.insecure);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, *creds, &port);
  builder.RegisterService(&coordinator_service);
  builder.RegisterService(&operator_service);
  builder.SetMaxReceiveMessageSize(8 << 20);
  builder.SetMaxSendMessageSize(8 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::critical("cannot listen on {}", config.listen);
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
  spdlog::info("fedmf-server listening on port {} ({}), database {}", port,
               config.tls.insecure ? "INSECURE" : "mTLS", config.database);

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("shutting down");
  coordinator.Stop();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
