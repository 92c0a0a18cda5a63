// The port a daemon bound, published for whoever started it (tests, the demo,
// compose health checks) to read: written to a temporary file and renamed, so
// a reader polling for the file never sees half a number.
#ifndef FEDMF_COMMON_NET_PORT_FILE_H_
#define FEDMF_COMMON_NET_PORT_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace fedmf::net {

// Writes "<port>\n" to `path` atomically. Unavailable (naming the path) when
// the file cannot be written or renamed.
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_PORT_FILE_H_
