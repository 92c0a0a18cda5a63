#include "common/metrics/http_server.h"

#include <httplib.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/net/port_file.h"

namespace fedmf::metrics {

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& what, const std::string& listen, const std::string& port_file,
    std::vector<std::pair<std::string, HttpHandler>> routes, HttpGuard guard) {
  ASSIGN_OR_RETURN(auto host_port, SplitHostPort(what, listen));
  const auto& [host, port] = host_port;

  std::unique_ptr<HttpServer> s(new HttpServer());
  s->server_ = std::make_unique<httplib::Server>();
  for (auto& [pattern, handler] : routes) {
    s->server_->Get(pattern, [handler = std::move(handler)](const httplib::Request& req,
                                                            httplib::Response& res) {
      std::vector<std::string> captures(req.matches.begin(), req.matches.end());
      HttpReply reply = handler(captures);
      res.status = reply.status;
      res.set_content(reply.body, reply.content_type);
    });
  }
  if (guard) {
    s->server_->set_pre_routing_handler(
        [guard = std::move(guard)](const httplib::Request& req, httplib::Response& res) {
          std::optional<HttpReply> refused = guard(
              HttpRequestHead{req.get_header_value("Host"), req.get_header_value("Authorization")});
          if (!refused.has_value()) return httplib::Server::HandlerResponse::Unhandled;
          res.status = refused->status;
          if (refused->status == 401) {
            res.set_header("WWW-Authenticate", "Basic realm=\"fedmf dashboard\"");
          }
          res.set_content(refused->body, refused->content_type);
          return httplib::Server::HandlerResponse::Handled;
        });
  }
  s->port_ = port == 0 ? s->server_->bind_to_any_port(host)
                       : (s->server_->bind_to_port(host, port) ? port : -1);
  if (s->port_ <= 0)
    return absl::UnavailableError(absl::StrCat(what, ": cannot listen on ", listen));
  if (!port_file.empty()) {
    if (absl::Status w = net::WritePortFile(port_file, s->port_); !w.ok()) {
      return absl::UnavailableError(absl::StrCat(what, ": ", w.message()));
    }
  }
  httplib::Server* server = s->server_.get();
  s->thread_ = std::thread([server] { server->listen_after_bind(); });
  return s;
}

HttpServer::~HttpServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace fedmf::metrics
