#include "tools/fedmf/health_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "common/cli/command_line.h"
#include "common/net/credentials.h"
#include "common/net/health_client.h"
#include "common/net/tls_diagnosis.h"
#include "common/pki/tls_files.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {
namespace {

struct HealthArgs {
  std::string address;
  std::string service;
  std::string peer_name;
  std::string cert_dir = "certs";
  std::string name = "operator";
  bool insecure = false;
  double timeout_seconds = 5;
  bool json = false;
};

// Exit codes: 0 SERVING, 1 reachable but not serving, 2 usage/TLS material,
// 3 unreachable (so a health check script can tell them apart).
int Run(const HealthArgs& a) {
  if (!(a.timeout_seconds > 0)) {
    std::cerr << "fedmf health: --timeout must be > 0 seconds\n";
    return 2;
  }
  const net::TlsConfig tls{a.insecure, a.cert_dir, a.name};
  net::ExpectedPeer peer{a.peer_name, std::nullopt};
  if (a.peer_name == "server") peer.role = pki::Role::kServer;
  auto channel = net::MakeChannel(a.address, tls, a.peer_name);
  if (!channel.ok()) {
    return Report("fedmf health", UsageError(channel.status()));
  }
  // (After the channel: missing TLS material is a usage error, exit 2.)
  if (!a.insecure && a.peer_name.empty()) {
    // Dialed by address, not by certificate name: one plain handshake says
    // at once whether the daemon there has a certificate for that name,
    // instead of gRPC retrying until --timeout (common/net/tls_diagnosis.h).
    const std::string cause = net::DiagnoseRpcFailure(absl::UnavailableError("health"), a.address,
                                                      tls, peer, absl::Seconds(a.timeout_seconds));
    if (!cause.empty()) {
      std::cerr << "fedmf health: cause: " << cause << "\n";
      return kExitUnreachable;
    }
  }
  auto status = net::CheckHealth(*channel, a.address, a.service, absl::Seconds(a.timeout_seconds));
  if (!status.ok()) {
    std::cerr << "fedmf health: " << status.status().message() << "\n";
    // gRPC says only "failed to connect" / "Deadline Exceeded": find the TLS
    // cause with a plain handshake (common/net/tls_diagnosis.h).
    const std::string cause = net::DiagnoseRpcFailure(absl::UnavailableError("health"), a.address,
                                                      tls, peer, absl::Seconds(a.timeout_seconds));
    if (!cause.empty()) std::cerr << "fedmf health: cause: " << cause << "\n";
    return kExitUnreachable;
  }
  if (a.json) {
    std::cout << nlohmann::json{{"address", a.address}, {"service", a.service}, {"status", *status}}
                     .dump()
              << "\n";
  } else {
    std::cout << *status << "\n";
  }
  return *status == "SERVING" ? 0 : 1;
}

}  // namespace

void RegisterHealthCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<HealthArgs>();
  CLI::App* cmd = app.add_subcommand(
      "health", "grpc.health.v1 check of a daemon; prints its status, exit 0 only if SERVING");
  cmd->add_option("address", a->address, "the daemon's gRPC address host:port")->required();
  cmd->add_option("--service", a->service, "service name (default: the whole server)");
  cmd->add_option("--peer-name", a->peer_name,
                  "the daemon's certificate name when it differs from the host dialed "
                  "(server, a party's name, ...)");
  cmd->add_option("--cert-dir", a->cert_dir, "directory with ca.crt and NAME.crt/.key")
      ->capture_default_str();
  cmd->add_option("--name", a->name, "the certificate to present (any name the CA issued)")
      ->capture_default_str();
  cmd->add_flag("--insecure", a->insecure, "plaintext (only against --insecure daemons)");
  cmd->add_option("--timeout", a->timeout_seconds, "seconds to wait for an answer")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "print one JSON object {address, service, status}");
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace fedmf::cli
