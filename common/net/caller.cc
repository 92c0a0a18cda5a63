#include "common/net/caller.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/log/log_throttle.h"
#include "common/net/credentials.h"
#include "spdlog/spdlog.h"

namespace fedmf::net {

absl::StatusOr<std::string> CheckCaller(const pki::PeerIdentity* certificate,
                                        const CallerRule& rule, const std::string& claimed) {
  if (certificate == nullptr) {
    if (!rule.field.empty() && claimed.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("field '", rule.field, "': required"));
    }
    return claimed;
  }
  if (certificate->role != rule.role) {
    return absl::PermissionDeniedError(absl::StrCat(
        "certificate '", certificate->name, "' has role ", pki::RoleToString(certificate->role),
        ", this service is for ", rule.serves, " (role ", pki::RoleToString(rule.role), ")"));
  }
  if (!claimed.empty() && claimed != certificate->name) {
    const std::string shown = base::EscapePeerText(claimed, 128);  // the peer's own text
    // An incident, but one a peer can repeat at will: a bounded number of lines.
    static auto* const throttle = new log::LogThrottle(30);
    if (int64_t skipped = 0; throttle->Allow(absl::Now(), &skipped)) {
      spdlog::warn("'{}' tried to speak for '{}'{}", certificate->name, shown,
                   skipped > 0 ? absl::StrCat(" (", skipped, " such lines not logged)") : "");
    }
    return absl::PermissionDeniedError(absl::StrCat("field '", rule.field, "': certificate '",
                                                    certificate->name, "' cannot speak for '",
                                                    shown, "'"));
  }
  return certificate->name;
}

absl::StatusOr<std::string> AuthorizeCaller(const grpc::ServerContext& context, bool insecure,
                                            const CallerRule& rule, const std::string& claimed) {
  if (insecure) return CheckCaller(nullptr, rule, claimed);
  ASSIGN_OR_RETURN(pki::PeerIdentity id, PeerIdentityOf(context));
  return CheckCaller(&id, rule, claimed);
}

}  // namespace fedmf::net
