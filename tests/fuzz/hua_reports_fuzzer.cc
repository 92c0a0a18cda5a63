// Hua et al. S3 masked reports at fedmf-aggregator (AggregatorService::Begin
// and ::Submit through aggregator/aggregator_round.h, then hua::ThirdParty), and
// the server's decoding of the aggregator's sums (net::FromWire(HuaForward)).
// Input: records (tests/fuzz/fuzz_input.h): a v1::HuaPlan, then
// v1::HuaReportBatch messages, each submitted as its `host` field says (the
// authenticated name); the rest of the input is decoded as a v1::HuaForward.
// Properties: no crash; only items of the plan are forwarded, each with
// every planned user and `dim` values, disjoint from the withheld ones; a
// forward survives the wire round trip the server decodes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>

#include "aggregator/aggregator_round.h"
#include "common/hua/wire/hua_codec.h"
#include "common/random/csprng.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace fedmf;  // NOLINT: a fuzz target, one function
using fedmf::fuzz::Check;

void Aggregate(fuzz::FuzzInput& in) {
  v1::HuaPlan wire_plan;
  if (!in.Parse(&wire_plan)) return;
  auto planned = server::PlanFromWire(wire_plan);
  if (!planned.ok()) return;
  const int32_t dim = wire_plan.dim();
  auto tp = hua::ThirdParty::Create(hua::Scenario::kDynamic, dim, random::Csprng::FromSeed(1));
  Check(tp.ok());
  if (!tp->Begin(planned->plan).ok()) return;
  for (int b = in.Byte() % 4; b > 0; --b) {
    v1::HuaReportBatch batch;
    if (!in.Parse(&batch)) continue;
    for (const v1::HuaMaskedReport& r : batch.reports()) {
      (void)server::AcceptReport(planned->hosts, batch.host(), r, batch, dim, *tp);
    }
  }
  auto forward = tp->Flush();
  if (!forward.ok()) return;
  std::set<int32_t> forwarded;
  for (const hua::ItemSum& s : forward->items) {
    auto it = std::find_if(planned->plan.items.begin(), planned->plan.items.end(),
                           [&](const hua::PlannedItem& p) { return p.item == s.item; });
    Check(it != planned->plan.items.end());
    Check(s.contributors == static_cast<int32_t>(it->users.size()));
    Check(s.sum.size() == static_cast<size_t>(dim));
    Check(forwarded.insert(s.item).second);
  }
  for (int32_t item : forward->incomplete_items) Check(!forwarded.count(item));
  auto back = net::FromWire(net::ToWire(wire_plan.job_id(), *forward), dim);
  Check(back.ok());
  Check(back->items.size() == forward->items.size());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fedmf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  Aggregate(in);
  const std::string_view rest = in.Rest();
  v1::HuaForward f;
  if (f.ParseFromArray(rest.data(), static_cast<int>(rest.size()))) {
    (void)net::FromWire(f, 1 + static_cast<int32_t>(rest.size() % 8));
  }
  return 0;
}
