// The neighbourhood graph of a session: who masks with and shares secrets
// with whom.
//
// Complete graph (Bonawitz et al.): every pair of devices is adjacent.
// Harary graph (SecAgg+, Bell et al. 2020, §3): the devices are placed on a
// ring in the order of a pseudorandom permutation, and each one is adjacent
// to the degree/2 nearest devices on either side. The permutation is a
// Fisher–Yates shuffle driven by Csprng::FromSeed(graph_seed) forked under a
// fixed label, so it is identical on every platform and every party can
// recompute (and so verify) any neighbourhood from the public config. The
// random placement is what makes the dropped/corrupted devices land at random
// ring positions, which Bell et al.'s connectivity bound needs.
#ifndef FEDMF_COMMON_SECAGG_GRAPH_H_
#define FEDMF_COMMON_SECAGG_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/secagg/config.h"

namespace fedmf::secagg {

class NeighbourhoodGraph {
 public:
  // The whole graph (the server's view): O(n * degree) memory for Harary,
  // O(n) for the complete graph (whose neighbourhoods are computed on demand).
  static absl::StatusOr<NeighbourhoodGraph> Create(const SessionConfig& config);

  // One device's neighbours, sorted by id, without building the whole graph:
  // O(n) time for the permutation, O(degree) output. What a device computes.
  static absl::StatusOr<std::vector<DeviceId>> NeighboursOf(const SessionConfig& config,
                                                            DeviceId device);

  size_t size() const { return roster_.size(); }
  std::span<const DeviceId> roster() const { return roster_; }
  // Position of `device` in the (sorted) roster, if it is there.
  std::optional<size_t> IndexOf(DeviceId device) const;
  // Neighbours of the device at roster index `index`, as sorted roster indices.
  std::vector<size_t> NeighbourIndices(size_t index) const;
  // f(j) for each of them, in the same order, without building the list (a
  // server looks neighbourhoods up once per share it parses).
  template <typename F>
  void ForEachNeighbour(size_t index, F&& f) const {
    if (kind_ == GraphKind::kHarary) {
      for (size_t j : adjacency_[index]) f(j);
      return;
    }
    for (size_t j = 0; j < roster_.size(); ++j) {
      if (j != index) f(j);
    }
  }

 private:
  NeighbourhoodGraph(std::vector<DeviceId> roster, GraphKind kind,
                     std::vector<std::vector<size_t>> adjacency);

  std::vector<DeviceId> roster_;
  GraphKind kind_;
  std::vector<std::vector<size_t>> adjacency_;  // Harary only
};

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_GRAPH_H_
