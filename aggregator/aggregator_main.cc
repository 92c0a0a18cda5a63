// fedmf-aggregator: the semi-honest third party of Hua et al. S3 (sums masked
// user reports per item mod P, forwards only the sums to fedmf-server).
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "CLI/CLI.hpp"
#include "aggregator/aggregator_service.h"
#include "common/base/allocator.h"
#include "common/cli/command_line.h"
#include "common/log/log.h"
#include "common/log/log_setup.h"
#include "common/net/credentials.h"
#include "common/net/grpc_logging.h"
#include "common/net/port_file.h"
#include "common/net/stop_signal.h"

int main(int argc, char** argv) {
  fedmf::base::ConfigureAllocator("fedmf-aggregator");  // before any thread exists
  CLI::App app{"fedmf-aggregator — Hua et al.'s semi-honest third party (masked sums mod P)",
               "fedmf-aggregator"};
  fedmf::cli::AddVersionFlag(app);
  std::string listen = "0.0.0.0:7445", port_file, log_format = "text";
  fedmf::net::TlsConfig tls{false, "certs", "aggregator"};
  fedmf::server::AggregatorOptions options;
  app.add_option("--listen", listen, "address:port to listen on (port 0 = any)")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "write the bound port here");
  app.add_option("--cert-dir", tls.cert_dir, "holds ca.crt, <name>.crt, <name>.key")
      ->capture_default_str();
  app.add_option("--name", tls.name, "this daemon's certificate name (role aggregator)")
      ->capture_default_str();
  app.add_flag("--insecure", tls.insecure, "plaintext gRPC without authentication (testing only)");
  app.add_flag("--record-for-tests", options.record_for_tests,
               "TEST ONLY: keep every accepted report and serve it to operators (Recorded RPC)");
  app.add_option("--log-format", log_format, "text | json")->capture_default_str();
  if (std::optional<int> rc = fedmf::cli::ParseCommandLine(app, argc, argv)) return *rc;
  options.insecure = tls.insecure;
  if (auto s = fedmf::log::ConfigureLogging(log_format, "fedmf-aggregator"); !s.ok()) {
    std::cerr << "fedmf-aggregator: " << s.message() << "\n";
    return 2;
  }
  fedmf::net::RouteGrpcLogsToSpdlog();  // one log format, gRPC's lines too
  auto creds = fedmf::net::MakeServerCredentials(tls);
  if (!creds.ok()) {
    spdlog::critical("TLS: {}", creds.status().message());
    return 2;
  }
  fedmf::server::AggregatorService service(options);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, *creds, &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(8 << 20);
  builder.SetMaxSendMessageSize(8 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::critical("cannot listen on {}", listen);
    return 1;
  }
  if (!port_file.empty()) {
    if (absl::Status w = fedmf::net::WritePortFile(port_file, port); !w.ok()) {
      spdlog::critical("{}", w.message());
      return 1;
    }
  }
  spdlog::info("fedmf-aggregator listening on port {} ({}){}", port,
               tls.insecure ? "INSECURE" : "mTLS",
               options.record_for_tests ? ", RECORDING REPORTS FOR TESTS" : "");
  fedmf::net::InstallStopSignals();
  fedmf::net::WaitForStop();
  const auto& c = service.counters();
  spdlog::info("shutting down: {} reports accepted, {} rejected, {} sums forwarded",
               c.reports_accepted.load(), c.reports_rejected.load(), c.sums_forwarded.load());
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
