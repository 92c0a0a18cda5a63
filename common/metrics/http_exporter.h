// Serves a Registry's text exposition at GET /metrics over plain HTTP
// (cpp-httplib), for Prometheus scrapes and `curl`. Runs its own thread.
// Metrics carry no secrets (counts, timings, spent epsilon), hence no TLS;
// bind it to an internal interface.
#ifndef FEDMF_COMMON_METRICS_HTTP_EXPORTER_H_
#define FEDMF_COMMON_METRICS_HTTP_EXPORTER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/metrics/http_server.h"
#include "common/metrics/metrics.h"

namespace fedmf::metrics {

class HttpExporter {
 public:
  // `listen` is host:port (port 0 = any free port); the bound port is
  // written to `port_file` (atomically) unless it is empty. `before_scrape`
  // (may be null) runs before every render, to refresh gauges from daemon
  // state.
  static absl::StatusOr<std::unique_ptr<HttpExporter>> Start(const std::string& listen,
                                                             const std::string& port_file,
                                                             const Registry* registry,
                                                             std::function<void()> before_scrape);

  int port() const { return server_->port(); }

 private:
  explicit HttpExporter(std::unique_ptr<HttpServer> server) : server_(std::move(server)) {}
  std::unique_ptr<HttpServer> server_;
};

}  // namespace fedmf::metrics

#endif  // FEDMF_COMMON_METRICS_HTTP_EXPORTER_H_
