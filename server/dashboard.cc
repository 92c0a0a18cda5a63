#include "server/dashboard.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/dashboard_pages.h"
#include "server/fmf/job_coordinator.h"
#include "server/job_directory.h"

namespace fedmf::server {
namespace {

constexpr char kHtml[] = "text/html; charset=utf-8";

metrics::HttpReply Html(int status, std::string body) {
  return metrics::HttpReply{status, kHtml, std::move(body)};
}

}  // namespace

absl::StatusOr<std::unique_ptr<metrics::HttpServer>> StartDashboard(const std::string& listen,
                                                                    const std::string& port_file,
                                                                    JobCoordinator* fmf,
                                                                    LflCoordinator* lfl,
                                                                    HuaRunner* hua) {
  const JobDirectory jobs(fmf, lfl, hua);
  metrics::HttpHandler index = [jobs, fmf](const std::vector<std::string>&) {
    auto list = jobs.List();
    if (!list.ok()) return Html(500, DashboardErrorHtml(std::string(list.status().message())));
    return Html(200, DashboardIndexHtml(*list, fmf->ListParties()));
  };
  metrics::HttpHandler job = [jobs](const std::vector<std::string>& captures) {
    auto status = jobs.Get(captures.at(1));
    if (!status.ok()) {
      return Html(absl::IsNotFound(status.status()) ? 404 : 500,
                  DashboardErrorHtml(
                      absl::StrCat("job '", captures.at(1), "': ", status.status().message())));
    }
    return Html(200, DashboardJobHtml(*status));
  };
  return metrics::HttpServer::Start("dashboard", listen, port_file,
                                    {{"/", std::move(index)}, {"/jobs/([^/]+)", std::move(job)}});
}

}  // namespace fedmf::server
