#include "common/net/device_grants.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fedmf::net {

absl::StatusOr<uint64_t> ValidateDeviceGrants(
    const google::protobuf::RepeatedPtrField<v1::DeviceGrant>& grants, const std::string& field,
    uint64_t limit) {
  auto bad = [&](const std::string& sub, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("field '", field, sub, "': ", why));
  };
  if (grants.empty()) return bad("", "at least one device host");
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [first, end)
  uint64_t total = 0;
  for (const v1::DeviceGrant& g : grants) {
    if (g.host().empty()) return bad(".host", "required");
    if (g.count() == 0) return bad(".count", absl::StrCat("host '", g.host(), "': 0"));
    // Checked without overflow: first_device is untrusted up to 2^64 - 1.
    if (g.first_device() > limit || g.count() > limit - g.first_device()) {
      return bad(".first_device",
                 absl::StrCat("host '", g.host(), "': devices must be below ", limit));
    }
    ranges.push_back({g.first_device(), g.first_device() + g.count()});
    total += g.count();
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      return bad("", absl::StrCat("device ", ranges[i].first, " is granted twice"));
    }
  }
  return total;
}

}  // namespace fedmf::net
