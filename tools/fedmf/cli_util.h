// Small helpers shared by the fedmf subcommands.
#ifndef FEDMF_TOOLS_FEDMF_CLI_UTIL_H_
#define FEDMF_TOOLS_FEDMF_CLI_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/plot/svg_chart.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {

// Parses a positive epsilon; "inf" / "infinity" means non-private.
absl::StatusOr<double> ParseEpsilon(const std::string& text, const std::string& flag);

// "<setting>-<UTC time to the millisecond>", e.g. hfl-20261129T063512.123Z:
// the id of a job whose file names none.
std::string TimestampedJobId(const std::string& setting, absl::Time now);

// JSON cannot hold inf/NaN: those become null... except that readers want to
// know the difference, so +inf is written as the string "inf".
nlohmann::json JsonNumber(double x);

// --plot FILE.svg: the charts stacked in one SVG document, written whole
// (tmp + rename); the error names the flag and the file.
absl::Status WritePlot(const std::string& path, const std::vector<plot::LineChart>& charts);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_CLI_UTIL_H_
