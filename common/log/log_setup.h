// Process-wide log format for the daemons: `--log-format text|json`.
// JSON lines carry time, level, the daemon's name and the message (escaped),
// one object per line, for log shippers.
#ifndef FEDMF_COMMON_LOG_LOG_SETUP_H_
#define FEDMF_COMMON_LOG_LOG_SETUP_H_

#include <string>

#include "absl/status/status.h"

namespace fedmf::log {

// `format` is "text" or "json" (anything else: InvalidArgument naming the
// flag and its values); `who` names the daemon in every line.
absl::Status ConfigureLogging(const std::string& format, const std::string& who);

}  // namespace fedmf::log

#endif  // FEDMF_COMMON_LOG_LOG_SETUP_H_
