// What a certificate holder is in the federation. Carried in the certificate's
// subject OU, so an authenticated peer's role needs no separate lookup.
#ifndef FEDMF_COMMON_PKI_ROLE_H_
#define FEDMF_COMMON_PKI_ROLE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fedmf::pki {

enum class Role { kServer, kParty, kDevice, kAggregator, kOperator };

// "server", "party", "device", "aggregator", "operator".
std::string RoleToString(Role role);
// Exact (lower-case) match of RoleToString; InvalidArgument listing the valid
// roles otherwise.
absl::StatusOr<Role> RoleFromString(std::string_view s);

}  // namespace fedmf::pki

#endif  // FEDMF_COMMON_PKI_ROLE_H_
