#include "tools/fedmf/cli_util.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fedmf::cli {

std::string TimestampedJobId(const std::string& setting, absl::Time now) {
  return absl::StrCat(setting, "-", absl::FormatTime("%Y%m%dT%H%M%E3SZ", now, absl::UTCTimeZone()));
}

absl::StatusOr<double> ParseEpsilon(const std::string& text, const std::string& flag) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "inf" || lower == "infinity") return std::numeric_limits<double>::infinity();
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || value <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", text, "': expected a positive number or 'inf'"));
  }
  return value;
}

nlohmann::json JsonNumber(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (std::isnan(x)) return nullptr;
  return x;
}

absl::Status WritePlot(const std::string& path, const std::vector<plot::LineChart>& charts) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << plot::SvgDocument(charts);
    if (!out.flush()) {
      return absl::UnavailableError(absl::StrCat("--plot ", path, ": cannot write ", tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("--plot ", path, ": cannot write the file"));
  }
  return absl::OkStatus();
}

}  // namespace fedmf::cli
