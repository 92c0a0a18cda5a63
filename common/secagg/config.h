// The public parameters of one aggregation, known to the server and to every
// device before the first message (the daemons ship them with the job).
//
// Thresholds and the abort rule (the same in both graph modes):
//   * `threshold` t: Shamir threshold of every device's two secrets. Each
//     device i shares among its holders H(i) = {i} ∪ (N(i) ∩ U1), so
//     t <= |H(i)| <= degree + 1.
//   * `min_survivors` m >= t: the server aborts exactly when, at a phase
//     boundary, fewer than m devices remain (|U1|, |U2|, |U3| or |U4| < m),
//     or — only possible in SecAgg+ — when at unmasking some secret the sum
//     needs has fewer than t shares among the responders U4. For the
//     complete graph every responder holds a share of every device, so with
//     m = t the rule is simply "abort iff |U_phase| < t".
// Keys, self-mask seeds and hence masks are fresh per aggregation: a device
// generates new ones for every aggregation_id, and every KDF label binds it.
#ifndef FEDMF_COMMON_SECAGG_CONFIG_H_
#define FEDMF_COMMON_SECAGG_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg {

enum class GraphKind : uint8_t {
  kComplete = 0,  // Bonawitz et al.: everybody masks with everybody
  kHarary = 1,    // SecAgg+: a Harary graph H(degree, n) on a seeded permutation
};

// Bounds on sizes that drive allocation (configs may come from operators).
inline constexpr size_t kMaxRosterSize = size_t{1} << 20;
inline constexpr size_t kMaxVectorLength = size_t{1} << 28;

// The device ids of a session: an immutable list that every copy of a
// SessionConfig shares. A simulation keeps one config per device, and
// 70,000 private copies of a 70,000-id list would be 39 GB. Reads like a
// const std::vector<DeviceId>; replaced, never edited in place.
class Roster {
 public:
  Roster();
  Roster(std::vector<DeviceId> ids);  // NOLINT: implicit, as the vector it wraps
  Roster(std::initializer_list<DeviceId> ids);

  const std::vector<DeviceId>& ids() const { return *ids_; }
  operator const std::vector<DeviceId>&() const { return *ids_; }  // NOLINT
  size_t size() const { return ids_->size(); }
  bool empty() const { return ids_->empty(); }
  DeviceId operator[](size_t i) const { return (*ids_)[i]; }
  std::vector<DeviceId>::const_iterator begin() const { return ids_->begin(); }
  std::vector<DeviceId>::const_iterator end() const { return ids_->end(); }
  bool operator==(const Roster& other) const { return ids_ == other.ids_ || *ids_ == *other.ids_; }
  bool operator==(const std::vector<DeviceId>& other) const { return *ids_ == other; }

 private:
  std::shared_ptr<const std::vector<DeviceId>> ids_;  // never null
};

struct SessionConfig {
  uint64_t aggregation_id = 0;
  // Sorted, unique, never kServerId.
  Roster roster;
  GraphKind graph = GraphKind::kComplete;
  // Harary only: even, 2 <= degree < |roster|.
  int degree = 0;
  // Harary only: the permutation seed. Chosen by the server; every device
  // recomputes the whole graph from it, so the server cannot hand different
  // devices inconsistent neighbourhoods. (A server able to corrupt devices
  // could still grind seeds for a placement it likes; where that matters,
  // derive the seed from a value fixed before devices are corrupted, e.g. a
  // public beacon or a hash of the roster and aggregation id.)
  uint64_t graph_seed = 0;
  int threshold = 0;
  int min_survivors = 0;
  size_t vector_length = 0;
  int bits = 32;  // inputs and sums live in Z_{2^bits}, 1 <= bits <= 64
  // Run the ConsistencyCheck round between MaskedInput and Unmasking
  // (signing.h). The server's switch only: a device that signs (ClientSigning)
  // requires the round whatever this says, and aborts if the server skips it.
  bool consistency_check = false;
};

absl::Status ValidateSessionConfig(const SessionConfig& config);

// Most neighbours a device can have in this session (n - 1 or degree).
size_t MaxDegree(const SessionConfig& config);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_CONFIG_H_
