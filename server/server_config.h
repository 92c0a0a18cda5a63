// fedmf-server configuration (YAML; every key documented in
// docs/configuration.md; unknown keys are errors).
#ifndef FEDMF_SERVER_SERVER_CONFIG_H_
#define FEDMF_SERVER_SERVER_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/net/credentials.h"
#include "server/call_governor.h"
#include "server/fmf/job_coordinator.h"

namespace fedmf::server {

struct ServerConfig {
  std::string listen = "0.0.0.0:7443";
  std::string port_file;  // written with the bound port (for port 0)
  std::string database = "fedmf-server.db";
  net::TlsConfig tls{false, "certs", "server"};
  int32_t max_chunk_values = 1 << 16;
  CoordinatorOptions coordinator;
  std::string log_format = "text";  // text | json
  std::string metrics_listen;       // host:port of GET /metrics; empty = off
  std::string metrics_port_file;    // written with the bound metrics port
  // The read-only web dashboard (plain HTTP: jobs, per-round plots, party
  // liveness); empty = off. Loopback addresses only unless
  // dashboard_allow_remote, since job and party names would travel in clear.
  std::string dashboard_listen;
  std::string dashboard_port_file;  // written with the bound dashboard port
  bool dashboard_allow_remote = false;
  // Host header values the dashboard answers besides its own loopback
  // address and "localhost" (a browser tricked by DNS rebinding sends the
  // attacker's name and is refused).
  std::vector<std::string> dashboard_hosts;
  // A file holding the dashboard's access token, required for a
  // non-loopback dashboard_listen: requests then need "Authorization:
  // Bearer TOKEN" (or Basic with TOKEN as the password).
  std::string dashboard_token_file;
  // Operator certificates that may cancel any job; any other operator
  // cancels only the jobs it submitted.
  std::vector<std::string> admin_operators;
  // Concurrency caps, so no client can exhaust the server: gRPC threads
  // (ResourceQuota; a call beyond it gets RESOURCE_EXHAUSTED) and concurrent
  // long-polls (GetTask, GetDeviceTask, Hua Poll; one beyond it gets
  // RESOURCE_EXHAUSTED at once instead of holding a thread).
  int32_t max_threads = 320;
  int32_t max_concurrent_polls = 128;  // per pool of calls (operators, parties, device hosts)
  // Concurrent calls per role and per certificate, and every call's
  // deadlines (server/call_governor.h): `calls:` in the config.
  CallLimits calls;
};

// Whether `host` (an address or a name, no port) is a loopback one:
// 127.0.0.0/8 or ::1 parsed as addresses, or the name "localhost". A name
// that merely starts with "127." is not.
bool IsLoopbackHost(const std::string& host);

// OK for a loopback host or with `allow_remote`; otherwise an error naming
// the address and the way out.
absl::Status CheckDashboardListen(const std::string& listen, bool allow_remote);

absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path);
absl::StatusOr<ServerConfig> ParseServerConfig(const std::string& text, const std::string& name);

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_SERVER_CONFIG_H_
