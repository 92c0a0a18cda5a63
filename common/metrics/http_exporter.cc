#include "common/metrics/http_exporter.h"

#include <httplib.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fedmf::metrics {

absl::StatusOr<std::unique_ptr<HttpExporter>> HttpExporter::Start(
    const std::string& listen, const std::string& port_file, const Registry* registry,
    std::function<void()> before_scrape) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", listen, "': expected host:port, e.g. 0.0.0.0:9464"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  std::unique_ptr<HttpExporter> e(new HttpExporter());
  e->server_ = std::make_unique<httplib::Server>();
  e->server_->Get("/metrics", [registry, before_scrape](const httplib::Request&,
                                                        httplib::Response& res) {
    if (before_scrape) before_scrape();
    res.set_content(registry->Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  e->port_ = port == 0 ? e->server_->bind_to_any_port(host)
                        : (e->server_->bind_to_port(host, port) ? port : -1);
  if (e->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("metrics: cannot listen on ", listen));
  }
  if (!port_file.empty()) {
    // Readers poll for the file: write then rename, so they never see half.
    const std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << e->port_ << "\n";
    if (std::rename(tmp.c_str(), port_file.c_str()) != 0) {
      return absl::UnavailableError(absl::StrCat("metrics: cannot write ", port_file));
    }
  }
  httplib::Server* server = e->server_.get();
  e->thread_ = std::thread([server] { server->listen_after_bind(); });
  return e;
}

HttpExporter::~HttpExporter() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace fedmf::metrics
