// fedmf.v1 Hua wire messages (hua.proto, JobSpec.hua) <-> common/hua's
// message structs, validated at the edge: every vector has exactly `dim`
// entries, doubles are finite, ids and counts are in range. Z_P elements are
// fixed64, so every one is < P = 2^64 by construction.
#ifndef FEDMF_COMMON_HUA_WIRE_HUA_CODEC_H_
#define FEDMF_COMMON_HUA_WIRE_HUA_CODEC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/hua/messages.h"
#include "common/hua/params.h"
#include "fedmf/v1/hua.pb.h"

namespace fedmf::net {

// What a Hua S3 job needs beyond HuaParams.
struct HuaJob {
  hua::HuaParams params;
  data::RatingRange range;
  int32_t num_items = 0;
  double test_fraction = 0.1;
  bool has_seed = false;
  uint64_t seed = 0;
};

// Validates a SETTING_HUA_S3 spec (errors name the JobSpec field).
absl::StatusOr<HuaJob> HuaJobFromSpec(const v1::JobSpec& spec);
// The spec for `job` (setting, dim, epsilon, rounds, rating range, seed, spec.hua).
v1::JobSpec SpecFromHuaJob(const HuaJob& job);

v1::HuaPhase ToWire(hua::Phase phase);
absl::StatusOr<hua::Phase> PhaseFromWire(v1::HuaPhase phase);

// Requests: server -> device host. Decoding checks sizes against `dim`.
v1::HuaInitRequest ToWire(const hua::InitRequest& r);
absl::StatusOr<hua::InitRequest> FromWire(const v1::HuaInitRequest& r, int32_t round, int32_t dim);
v1::HuaIterationRequest ToWire(const hua::IterationRequest& r);
absl::StatusOr<hua::IterationRequest> FromWire(const v1::HuaIterationRequest& r, int32_t iteration,
                                               int32_t pass, int32_t dim);

// Reports: device host -> aggregator. The batch header gives phase/round/pass.
v1::HuaMaskedReport ToWire(const hua::MaskedReport& r);
absl::StatusOr<hua::MaskedReport> FromWire(const v1::HuaMaskedReport& r,
                                           const v1::HuaReportBatch& header, int32_t dim);

// Plan: server -> aggregator (without the user -> host table).
v1::HuaPlan ToWire(const std::string& job_id, int32_t dim, const hua::AggregationPlan& p);
absl::StatusOr<hua::AggregationPlan> FromWire(const v1::HuaPlan& p);

// Sums: aggregator -> server.
v1::HuaForward ToWire(const std::string& job_id, const hua::AggregateForward& f);
absl::StatusOr<hua::AggregateForward> FromWire(const v1::HuaForward& f, int32_t dim);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_HUA_WIRE_HUA_CODEC_H_
