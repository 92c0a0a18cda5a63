// fedmf-party: a cross-silo party daemon. Dials out to the server; serves its
// own admin endpoint (recommendations, ledger) locally.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "CLI/CLI.hpp"
#include "common/net/credentials.h"
#include "party/admin_service.h"
#include "party/party_agent.h"
#include "party/party_config.h"
#include "party/party_store.h"
#include "common/log/log.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fedmf-party — a party of an FMF federation"};
  std::string config_path, server;
  bool insecure = false;
  app.add_option("--config", config_path, "YAML config file (docs/configuration.md)")->required();
  app.add_option("--server", server, "override: server address");
  app.add_flag("--insecure", insecure, "plaintext gRPC without authentication (testing only)");
  CLI11_PARSE(app, argc, argv);

  auto config = fedmf::party::LoadPartyConfig(config_path);
  if (!config.ok()) {
    std::cerr << "fedmf-party: " << config.status().message() << "\n";
    return 2;
  }
  if (!server.empty()) config->server = server;
  if (insecure) config->tls.insecure = true;
  if (config->log_format == "json") {
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e","level":"%l","party":")" +
                        config->name + R"(","msg":"%v"})");
  } else {
    spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [" + config->name + "] [%l] %v");
  }

  std::error_code ec;
  std::filesystem::create_directories(config->state_dir, ec);
  auto store = fedmf::party::PartyStore::Open(
      (std::filesystem::path(config->state_dir) / (config->name + ".ledger.db")).string());
  if (!store.ok()) {
    spdlog::critical("{}", store.status().message());
    return 1;
  }
  auto channel = fedmf::net::MakeChannel(config->server, config->tls, config->server_name);
  if (!channel.ok()) {
    spdlog::critical("TLS: {}", channel.status().message());
    return 2;
  }
  fedmf::party::PartyAgent agent(*config, store->get(), *channel);
  if (auto s = agent.Init(); !s.ok()) {
    spdlog::critical("ledger: {}", s.message());
    return 1;
  }

  auto admin_creds = fedmf::net::MakeServerCredentials(config->tls);
  if (!admin_creds.ok()) {
    spdlog::critical("TLS: {}", admin_creds.status().message());
    return 2;
  }
  fedmf::party::AdminService admin(&agent, config->tls.insecure);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int admin_port = 0;
  builder.AddListeningPort(config->admin_listen, *admin_creds, &admin_port);
  builder.RegisterService(&admin);
  auto admin_server = builder.BuildAndStart();
  if (admin_server == nullptr || admin_port == 0) {
    spdlog::critical("cannot listen on {}", config->admin_listen);
    return 1;
  }
  if (!config->admin_port_file.empty()) {
    const std::string tmp = config->admin_port_file + ".tmp";
    std::ofstream(tmp) << admin_port << "\n";
    std::rename(tmp.c_str(), config->admin_port_file.c_str());
  }
  spdlog::info("party '{}' up: server {}, admin port {}", config->name, config->server, admin_port);

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  agent.Run(&g_stop);
  admin_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}
