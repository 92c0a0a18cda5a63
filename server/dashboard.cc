#include "server/dashboard.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/dashboard_pages.h"
#include "server/job_directory.h"
#include "server/server_config.h"

namespace fedmf::server {
namespace {

constexpr char kHtml[] = "text/html; charset=utf-8";

metrics::HttpReply Html(int status, std::string body) {
  return metrics::HttpReply{status, kHtml, std::move(body)};
}

// The host part of a Host header value: "[::1]:8080" -> "::1",
// "Example.org:80" -> "example.org".
std::string HostOf(std::string value) {
  std::string host;
  if (!value.empty() && value.front() == '[') {
    const size_t close = value.find(']');
    host = close == std::string::npos ? value : value.substr(1, close - 1);
  } else {
    const size_t colon = value.find(':');
    host = colon == std::string::npos ? value : value.substr(0, colon);
  }
  return absl::AsciiStrToLower(host);
}

// Equal in time independent of where they differ.
bool SameSecret(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool Authorized(const std::string& token, const std::string& header) {
  if (absl::StartsWith(header, "Bearer ")) return SameSecret(header.substr(7), token);
  if (absl::StartsWith(header, "Basic ")) {
    std::string decoded;
    if (!absl::Base64Unescape(header.substr(6), &decoded)) return false;
    const size_t colon = decoded.find(':');  // user:password, the password is the token
    return colon != std::string::npos && SameSecret(decoded.substr(colon + 1), token);
  }
  return false;
}

}  // namespace

std::optional<metrics::HttpReply> DashboardRefusal(const DashboardAccess& access,
                                                   const metrics::HttpRequestHead& head) {
  const std::string host = HostOf(head.host);
  const bool known =
      IsLoopbackHost(host) || host == absl::AsciiStrToLower(access.listen_host) ||
      std::any_of(access.hosts.begin(), access.hosts.end(),
                  [&](const std::string& h) { return absl::AsciiStrToLower(h) == host; });
  if (!known) {
    return metrics::HttpReply{421, "text/plain; charset=utf-8",
                              "this dashboard does not answer to that Host name (add it to "
                              "dashboard_hosts in the server config if it is yours)\n"};
  }
  if (!access.token.empty() && !Authorized(access.token, head.authorization)) {
    return metrics::HttpReply{401, "text/plain; charset=utf-8",
                              "the dashboard needs its access token (dashboard_token_file): "
                              "Authorization: Bearer TOKEN, or any user name with TOKEN as the "
                              "password\n"};
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<metrics::HttpServer>> StartDashboard(
    const std::string& listen, const std::string& port_file, DashboardAccess access,
    std::vector<JobRunner*> runners) {
  const JobDirectory jobs(std::move(runners));
  metrics::HttpHandler index = [jobs](const std::vector<std::string>&) {
    auto list = jobs.List();
    if (!list.ok()) return Html(500, DashboardErrorHtml(std::string(list.status().message())));
    return Html(200, DashboardIndexHtml(*list, jobs.ListParties()));
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
  return metrics::HttpServer::Start(
      "dashboard", listen, port_file, {{"/", std::move(index)}, {"/jobs/([^/]+)", std::move(job)}},
      [access = std::move(access)](const metrics::HttpRequestHead& head) {
        return DashboardRefusal(access, head);
      });
}

}  // namespace fedmf::server
