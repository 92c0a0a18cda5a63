#include "common/metrics/host_port.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fedmf::metrics {

absl::StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& what,
                                                          const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " address '", listen, "': expected host:port, e.g. 127.0.0.1:9464"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, port);
}

std::string BoundUrl(const std::string& listen, int port) {
  absl::StatusOr<std::pair<std::string, int>> parts = SplitHostPort("listen", listen);
  const std::string host = parts.ok() ? parts->first : listen;
  const bool v6 = host.find(':') != std::string::npos;
  return absl::StrCat("http://", v6 ? "[" : "", host, v6 ? "]" : "", ":", port);
}

}  // namespace fedmf::metrics
