#include "aggregator/aggregator_round.h"

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/wire/hua_codec.h"

namespace fedmf::server {

absl::StatusOr<PlannedRound> PlanFromWire(const v1::HuaPlan& req) {
  if (req.job_id().empty()) return absl::InvalidArgumentError("field 'job_id': required");
  auto plan = net::FromWire(req);
  if (!plan.ok()) return plan.status();
  PlannedRound out;
  out.plan = std::move(*plan);
  for (const v1::HuaPlannedUser& u : req.users()) {
    if (u.host().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field 'users': user ", u.user(), " has no host"));
    }
    out.hosts[u.user()] = u.host();
  }
  for (const hua::PlannedItem& it : out.plan.items) {
    for (int32_t user : it.users) {
      if (!out.hosts.count(user)) {
        return absl::InvalidArgumentError(
            absl::StrCat("field 'users': planned user ", user, " has no host"));
      }
    }
  }
  return out;
}

absl::Status AcceptReport(const std::map<int32_t, std::string>& hosts, const std::string& host,
                          const v1::HuaMaskedReport& report, const v1::HuaReportBatch& batch,
                          int32_t dim, hua::ThirdParty& third_party) {
  auto owner = hosts.find(report.user());
  if (owner == hosts.end() || owner->second != host) {
    return absl::PermissionDeniedError(absl::StrCat("not planned for host '", host, "'"));
  }
  ASSIGN_OR_RETURN(auto decoded, net::FromWire(report, batch, dim));
  return third_party.Accept(decoded);
}

}  // namespace fedmf::server
