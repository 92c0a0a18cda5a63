// fedmf-aggregator's checks on untrusted input, without gRPC so that they
// can be fuzzed (tests/fuzz/hua_reports_fuzzer.cc): the server's plan of a
// round, and each device host's masked report. AggregatorService calls these
// after authenticating the caller.
#ifndef FEDMF_AGGREGATOR_AGGREGATOR_ROUND_H_
#define FEDMF_AGGREGATOR_AGGREGATOR_ROUND_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/hua/messages.h"
#include "common/hua/third_party.h"
#include "fedmf/v1/hua.pb.h"

namespace fedmf::server {

// A decoded plan and who speaks for each planned user.
struct PlannedRound {
  hua::AggregationPlan plan;
  std::map<int32_t, std::string> hosts;  // user -> device host
};

// Decodes and checks a Begin request: a job id, a valid plan, and a host for
// every planned user.
absl::StatusOr<PlannedRound> PlanFromWire(const v1::HuaPlan& req);

// One report of `batch` from authenticated `host`: only the host the plan
// names for the user may report for it; then decoding against `dim` and the
// third party's own checks (round, plan, duplicates). OK = folded into the sum.
absl::Status AcceptReport(const std::map<int32_t, std::string>& hosts, const std::string& host,
                          const v1::HuaMaskedReport& report, const v1::HuaReportBatch& batch,
                          int32_t dim, hua::ThirdParty& third_party);

}  // namespace fedmf::server

#endif  // FEDMF_AGGREGATOR_AGGREGATOR_ROUND_H_
