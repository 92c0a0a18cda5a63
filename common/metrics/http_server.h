// A small plain-HTTP GET server on Debian's cpp-httplib, running its own
// thread: the daemons' /metrics endpoint and fedmf-server's dashboard. No
// TLS: bind it to an internal or loopback interface.
#ifndef FEDMF_COMMON_METRICS_HTTP_SERVER_H_
#define FEDMF_COMMON_METRICS_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/metrics/host_port.h"

namespace httplib {
class Server;
}

namespace fedmf::metrics {

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Called with the regex's captures (captures[0] = the whole path).
using HttpHandler = std::function<HttpReply(const std::vector<std::string>& captures)>;

// What a guard sees of a request before it is routed.
struct HttpRequestHead {
  std::string host;           // the Host header ("" if none)
  std::string authorization;  // the Authorization header ("" if none)
};
// Runs before every route: a reply refuses the request (the route never
// runs), nullopt lets it through.
using HttpGuard = std::function<std::optional<HttpReply>(const HttpRequestHead& head)>;

class HttpServer {
 public:
  // `listen` is host:port (port 0 = any free port); `what` names the server
  // in errors ("metrics", "dashboard"). The bound port is written to
  // `port_file` (atomically) unless it is empty. `routes` pair a path regex
  // (whole-path match, e.g. "/jobs/([^/]+)") with its GET handler.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& what, const std::string& listen, const std::string& port_file,
      std::vector<std::pair<std::string, HttpHandler>> routes, HttpGuard guard = nullptr);
  ~HttpServer();

  int port() const { return port_; }

 private:
  HttpServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace fedmf::metrics

#endif  // FEDMF_COMMON_METRICS_HTTP_SERVER_H_
