#include "common/secagg/config.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/mod2k.h"

namespace fedmf::secagg {

Roster::Roster() : ids_(std::make_shared<const std::vector<DeviceId>>()) {}

Roster::Roster(std::vector<DeviceId> ids)
    : ids_(std::make_shared<const std::vector<DeviceId>>(std::move(ids))) {}

Roster::Roster(std::initializer_list<DeviceId> ids) : Roster(std::vector<DeviceId>(ids)) {}

size_t MaxDegree(const SessionConfig& config) {
  const size_t n = config.roster.size();
  if (config.graph == GraphKind::kHarary) {
    return std::min(static_cast<size_t>(std::max(config.degree, 0)), n == 0 ? 0 : n - 1);
  }
  return n == 0 ? 0 : n - 1;
}

absl::Status ValidateSessionConfig(const SessionConfig& config) {
  const size_t n = config.roster.size();
  if (n < 2 || n > kMaxRosterSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("secagg: roster size ", n, " outside [2, ", kMaxRosterSize, "]"));
  }
  for (size_t i = 0; i < n; ++i) {
    if (config.roster[i] == kServerId) {
      return absl::InvalidArgumentError("secagg: roster contains the server id");
    }
    if (i > 0 && config.roster[i - 1] >= config.roster[i]) {
      return absl::InvalidArgumentError("secagg: roster must be sorted and unique");
    }
  }
  if (config.graph == GraphKind::kHarary) {
    if (config.degree < 2 || config.degree % 2 != 0 || static_cast<size_t>(config.degree) >= n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "secagg: Harary degree must be even and in [2, n-1], got ", config.degree, " for n=", n));
    }
  } else if (config.graph != GraphKind::kComplete) {
    return absl::InvalidArgumentError("secagg: unknown graph kind");
  }
  // t >= 2: with t = 1 any single neighbour could unmask a device alone.
  const size_t max_holders = MaxDegree(config) + 1;
  if (config.threshold < 2 || static_cast<size_t>(config.threshold) > max_holders) {
    return absl::InvalidArgumentError(absl::StrCat("secagg: threshold must be in [2, ", max_holders,
                                                   "], got ", config.threshold));
  }
  if (config.min_survivors < config.threshold || static_cast<size_t>(config.min_survivors) > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("secagg: min_survivors must be in [threshold, n] = [", config.threshold, ", ",
                     n, "], got ", config.min_survivors));
  }
  if (config.vector_length == 0 || config.vector_length > kMaxVectorLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("secagg: vector_length ", config.vector_length, " outside [1, 2^28]"));
  }
  return crypto::CheckModulusBits(config.bits);
}

}  // namespace fedmf::secagg
