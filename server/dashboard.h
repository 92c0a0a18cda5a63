// Serves the read-only dashboard (server/dashboard_pages.h) over plain HTTP:
// GET / (jobs and parties), GET /jobs/ID (one job's history and plots).
// Reads through the runners' own locks; writes nothing.
#ifndef FEDMF_SERVER_DASHBOARD_H_
#define FEDMF_SERVER_DASHBOARD_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/metrics/http_server.h"
#include "server/job_runner.h"

namespace fedmf::server {

// Who may read the dashboard. A browser on the operator's machine can be made
// to send requests to a loopback port from any web page (DNS rebinding: the
// attacker's name resolves to 127.0.0.1), so every request's Host header
// must name the dashboard itself; a non-loopback dashboard also needs the
// token.
struct DashboardAccess {
  std::string listen_host;         // the host part of dashboard_listen
  std::vector<std::string> hosts;  // dashboard_hosts: further names it answers to
  std::string token;               // empty = none required (loopback binds only)
};

// Whether a request with these headers may be served: nullopt, or the reply
// that refuses it (421 for a foreign Host, 401 without the token).
std::optional<metrics::HttpReply> DashboardRefusal(const DashboardAccess& access,
                                                   const metrics::HttpRequestHead& head);

// `listen` was checked by CheckDashboardListen (server_config.h). The
// runners (in JobDirectory's order) are not owned and must outlive the
// returned server.
absl::StatusOr<std::unique_ptr<metrics::HttpServer>> StartDashboard(
    const std::string& listen, const std::string& port_file, DashboardAccess access,
    std::vector<JobRunner*> runners);

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_DASHBOARD_H_
