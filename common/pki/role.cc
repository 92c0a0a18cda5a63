#include "common/pki/role.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fedmf::pki {
namespace {

constexpr std::array<std::pair<Role, const char*>, 5> kRoles = {{
    {Role::kServer, "server"},
    {Role::kParty, "party"},
    {Role::kDevice, "device"},
    {Role::kAggregator, "aggregator"},
    {Role::kOperator, "operator"},
}};

}  // namespace

std::string RoleToString(Role role) {
  for (const auto& [r, s] : kRoles) {
    if (r == role) return s;
  }
  return "unknown";
}

absl::StatusOr<Role> RoleFromString(std::string_view s) {
  for (const auto& [r, name] : kRoles) {
    if (name == s) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", absl::string_view(s.data(), s.size()),
                   "'; expected one of: server, party, device, aggregator, operator"));
}

}  // namespace fedmf::pki
