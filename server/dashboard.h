// Serves the read-only dashboard (server/dashboard_pages.h) over plain HTTP:
// GET / (jobs and parties), GET /jobs/ID (one job's history and plots).
// Reads through the runners' own locks; writes nothing.
#ifndef FEDMF_SERVER_DASHBOARD_H_
#define FEDMF_SERVER_DASHBOARD_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/metrics/http_server.h"

namespace fedmf::server {

class JobCoordinator;
class LflCoordinator;
class HuaRunner;

// `listen` was checked by CheckDashboardListen (server_config.h). The
// runners are not owned and must outlive the returned server.
absl::StatusOr<std::unique_ptr<metrics::HttpServer>> StartDashboard(const std::string& listen,
                                                                    const std::string& port_file,
                                                                    JobCoordinator* fmf,
                                                                    LflCoordinator* lfl,
                                                                    HuaRunner* hua);

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_DASHBOARD_H_
