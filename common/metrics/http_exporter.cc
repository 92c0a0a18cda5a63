#include "common/metrics/http_exporter.h"

#include <utility>

#include "common/base/status_macros.h"

namespace fedmf::metrics {

absl::StatusOr<std::unique_ptr<HttpExporter>> HttpExporter::Start(
    const std::string& listen, const std::string& port_file, const Registry* registry,
    std::function<void()> before_scrape) {
  HttpHandler metrics = [registry, before_scrape](const std::vector<std::string>&) {
    if (before_scrape) before_scrape();
    return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8", registry->Render()};
  };
  ASSIGN_OR_RETURN(auto server, HttpServer::Start("metrics", listen, port_file,
                                                  {{"/metrics", std::move(metrics)}}));
  return std::unique_ptr<HttpExporter>(new HttpExporter(std::move(server)));
}

}  // namespace fedmf::metrics
