// host:port parsing for the daemons' HTTP listeners (metrics, dashboard).
// Pure: the config loaders check addresses with it without linking HTTP.
#ifndef FEDMF_COMMON_METRICS_HOST_PORT_H_
#define FEDMF_COMMON_METRICS_HOST_PORT_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace fedmf::metrics {

// ("::1", 80) from "[::1]:80"; port 0 means "any free port". InvalidArgument
// naming `what` (e.g. "dashboard") when `listen` is not host:port.
absl::StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& what,
                                                          const std::string& listen);

// "http://HOST:PORT" of a listener configured as `listen` that bound `port`
// (listen's port may be 0: "any free port"); IPv6 hosts in brackets.
std::string BoundUrl(const std::string& listen, int port);

}  // namespace fedmf::metrics

#endif  // FEDMF_COMMON_METRICS_HOST_PORT_H_
