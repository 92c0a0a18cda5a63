// "key=value,..." <-> SyntheticOptions, for data specs and dataset sources.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/base/status_macros.h"
#include "common/data/internal/text_scan.h"
#include "common/data/synthetic.h"

namespace fedmf::data {
namespace {

constexpr absl::string_view kValidKeys = "users, items, density, rank, noise, min, max, seed";

absl::Status BadValue(absl::string_view key, absl::string_view value, absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat("synthetic option ", key, "='",
                                                 internal::Excerpt(value), "' is not ", expected));
}

absl::Status SetPositiveInt(absl::string_view key, absl::string_view value, int32_t* out) {
  auto v = internal::ParseInt64(value);
  if (!v.has_value() || *v < 1 || *v > INT32_MAX) return BadValue(key, value, "a positive integer");
  *out = static_cast<int32_t>(*v);
  return absl::OkStatus();
}

absl::Status SetDouble(absl::string_view key, absl::string_view value, double* out) {
  auto v = internal::ParseDouble(value);
  if (!v.has_value() || !std::isfinite(*v)) return BadValue(key, value, "a finite number");
  *out = *v;
  return absl::OkStatus();
}

absl::Status SetOption(absl::string_view key, absl::string_view value, SyntheticOptions& o) {
  if (key == "users") return SetPositiveInt(key, value, &o.num_users);
  if (key == "items") return SetPositiveInt(key, value, &o.num_items);
  if (key == "rank") return SetPositiveInt(key, value, &o.rank);
  if (key == "density") return SetDouble(key, value, &o.density);
  if (key == "noise") return SetDouble(key, value, &o.noise);
  if (key == "min") return SetDouble(key, value, &o.range.min);
  if (key == "max") return SetDouble(key, value, &o.range.max);
  if (key == "seed") {
    auto v = internal::ParseUint64(value);
    if (!v.has_value()) return BadValue(key, value, "a non-negative integer");
    o.seed = *v;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown synthetic option '", internal::Excerpt(key), "'; valid keys: ", kValidKeys));
}

// Shortest text that parses back to the same double, so a dataset's source
// string regenerates exactly the same data.
std::string ShortestDouble(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : absl::StrCat(v);
}

}  // namespace

absl::StatusOr<SyntheticOptions> ParseSyntheticOptions(const std::string& kv) {
  SyntheticOptions o;
  if (internal::IsBlank(kv)) return o;
  absl::flat_hash_set<absl::string_view> seen;
  for (absl::string_view entry : absl::StrSplit(kv, ',')) {
    entry = internal::Trim(entry);
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("synthetic option '", internal::Excerpt(entry),
                                                     "' is not key=value (valid keys: ", kValidKeys,
                                                     ")"));
    }
    const absl::string_view key = internal::Trim(entry.substr(0, eq));
    const absl::string_view value = internal::Trim(entry.substr(eq + 1));
    RETURN_IF_ERROR(SetOption(key, value, o));
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("synthetic option '", key, "' is given twice; keep one"));
    }
  }
  RETURN_IF_ERROR(ValidateSyntheticOptions(o));
  return o;
}

std::string FormatSyntheticOptions(const SyntheticOptions& o) {
  return absl::StrCat("users=", o.num_users, ",items=", o.num_items,
                      ",density=", ShortestDouble(o.density), ",rank=", o.rank,
                      ",noise=", ShortestDouble(o.noise), ",min=", ShortestDouble(o.range.min),
                      ",max=", ShortestDouble(o.range.max), ",seed=", o.seed);
}

}  // namespace fedmf::data
