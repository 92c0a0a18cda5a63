// The secure sum the LFL-SGDMF server runs twice per iteration (FMF paper
// Section 6.1): round 1 over the devices' noisy item gradients, round 2 over
// the survivors' replacement noise. The production implementation runs the
// SecAgg / SecAgg+ state machines (secagg_sum.h); IdealSum is the plaintext
// reference with the same dropout and abort semantics, for tests.
//
// A request lists the participants of one aggregation (its roster) and, for
// each, the point at which it vanishes. Devices that vanish before sending
// their masked input are not in the sum; those that vanish afterwards are
// (their masks are removed with the survivors' help) but take no further
// part in the iteration. The aggregation aborts — the server learns nothing —
// when fewer than `min_survivors` devices are left at the unmasking step
// (SecAgg+ may also abort when a needed secret lacks t shares).
#ifndef FEDMF_COMMON_LFL_SECURE_SUM_H_
#define FEDMF_COMMON_LFL_SECURE_SUM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/fixed_point.h"
#include "common/random/csprng.h"

namespace fedmf::lfl {

// Where a device stops talking during one aggregation, in protocol order
// (the phase boundaries of Bonawitz et al.).
enum class DropPoint : uint8_t {
  kBeforeAdvertise = 0,   // never shows up
  kAfterAdvertise = 1,    // advertises keys, then vanishes
  kAfterShareKeys = 2,    // shares keys, never sends a masked input
  kAfterMaskedInput = 3,  // sends y_i, gone before the unmasking request
  kDuringUnmasking = 4,   // its unmasking response is lost
  kNone = 5,              // stays to the end
};
inline constexpr int kNumDropPoints = 5;  // the vanishing ones

// Whether the device's input reaches the server (and so the sum).
inline bool Submits(DropPoint d) { return d >= DropPoint::kAfterMaskedInput; }

// The simulator's dropout model: with probability p the device vanishes
// during the aggregation, at a phase boundary drawn uniformly from the five
// above; otherwise kNone. So a fraction 3p/5 of the devices is missing from
// the sum, and the other 2p/5 are in it but gone afterwards.
DropPoint SampleDropPoint(random::Csprng& rng, double p);

struct SecureSumRequest {
  int32_t iteration = 0;
  int round = 1;  // 1: gradients + xi_i; 2: replacement noise xibar_i
  // Abort (server learns nothing) when fewer than this many remain.
  int64_t min_survivors = 1;
  // The fixed-point encoding of this round (see secagg_sum.h); required by
  // the secure implementation, ignored by IdealSum.
  const crypto::FixedPointCodec* codec = nullptr;
  // One entry per participant: where it vanishes.
  std::vector<DropPoint> drops;
  // Entries of every input.
  size_t length = 0;
  // Participant k's input, asked for only when the aggregation needs it
  // (Submits(drops[k])), at most once per k, possibly from worker threads
  // for different k at a time: so the inputs never all exist at once (70,000
  // devices at MovieLens-10M shape would hold 120 GB). Must be deterministic
  // and safe to call concurrently for different k. UseInputVectors serves
  // vectors held in memory.
  std::function<absl::StatusOr<std::vector<double>>(size_t k)> input;
  // Who participant k is among the job's devices (e.g. round 2's survivors
  // of round 1); empty: participant k is device k. Only implementations that
  // keep per-device state across aggregations (a secure-aggregation session)
  // read it.
  std::vector<int64_t> device_ids;
};

// Phases as in secagg::SimPhase: key agreement, sharing, masking, unmasking.
struct SecureSumCost {
  std::array<double, 4> client_seconds{};  // all devices' work
  std::array<double, 4> server_seconds{};
  uint64_t upload_bytes = 0;  // all devices together
  uint64_t download_bytes = 0;
  int64_t aggregations = 0;  // how many instances were run (incl. aborted)
  void Add(const SecureSumCost& other);
};

struct SecureSumOutcome {
  bool aborted = false;
  std::string abort_reason;
  std::vector<double> sum;       // decoded; empty if aborted
  std::vector<size_t> included;  // request positions whose input is in the sum
  SecureSumCost cost;
};

using SecureSumFn = std::function<absl::StatusOr<SecureSumOutcome>(const SecureSumRequest&)>;

// Inputs held in memory (tests, benchmarks): participant k's is *inputs[k],
// nullptr for one that never submits; sets request.length to the first
// input's. The vectors must outlive the request.
void UseInputVectors(SecureSumRequest& request, std::vector<const std::vector<double>*> inputs);

// Checks the round, the threshold and that a submitter's input can be asked
// for; returns request.length.
absl::StatusOr<size_t> ValidateSecureSumRequest(const SecureSumRequest& request);

// request.input(k), checked: named errors for a participant that never
// submits, a failed input and one of the wrong length.
absl::StatusOr<std::vector<double>> SecureSumInput(const SecureSumRequest& request, size_t k);

// The abort rule of a plaintext (ideal) aggregation: fewer than 2
// participants, or fewer than min_survivors still there at the end.
inline bool IdealAborts(size_t participants, int64_t remaining, int64_t min_survivors) {
  return participants < 2 || remaining < min_survivors;
}

// Plaintext sum of the submitted inputs, aborting iff fewer than
// min_survivors devices are still there at the end (DropPoint::kNone) or
// there are fewer than 2 participants.
absl::StatusOr<SecureSumOutcome> IdealSum(const SecureSumRequest& request);

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_SECURE_SUM_H_
