// Small helpers shared by the fedmf subcommands.
#ifndef FEDMF_TOOLS_FEDMF_CLI_UTIL_H_
#define FEDMF_TOOLS_FEDMF_CLI_UTIL_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {

// Parses a positive epsilon; "inf" / "infinity" means non-private.
absl::StatusOr<double> ParseEpsilon(const std::string& text, const std::string& flag);

// JSON cannot hold inf/NaN: those become null... except that readers want to
// know the difference, so +inf is written as the string "inf".
nlohmann::json JsonNumber(double x);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_CLI_UTIL_H_
