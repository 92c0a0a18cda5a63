#include "common/secagg/graph.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/random/csprng.h"

namespace fedmf::secagg {
namespace {

// ring[p] = roster index placed at ring position p. Our own Fisher–Yates
// (std::shuffle's algorithm is implementation-defined, and every party must
// derive the same ring).
std::vector<size_t> RingOrder(const SessionConfig& config) {
  std::vector<size_t> ring(config.roster.size());
  std::iota(ring.begin(), ring.end(), size_t{0});
  random::Csprng rng = random::Csprng::FromSeed(config.graph_seed).Fork("fedmf/secagg/harary-ring");
  for (size_t i = ring.size(); i > 1; --i) {
    std::swap(ring[i - 1], ring[rng.UniformInt(i)]);
  }
  return ring;
}

// Roster indices adjacent to ring position p.
std::vector<size_t> HararyNeighboursAt(const std::vector<size_t>& ring, size_t p, int degree) {
  const size_t n = ring.size();
  std::vector<size_t> out;
  out.reserve(static_cast<size_t>(degree));
  for (size_t d = 1; d <= static_cast<size_t>(degree / 2); ++d) {
    out.push_back(ring[(p + d) % n]);
    out.push_back(ring[(p + n - d) % n]);
  }
  std::sort(out.begin(), out.end());
  // degree < n keeps the 2 * degree/2 positions distinct.
  return out;
}

}  // namespace

NeighbourhoodGraph::NeighbourhoodGraph(std::vector<DeviceId> roster, GraphKind kind,
                                       std::vector<std::vector<size_t>> adjacency)
    : roster_(std::move(roster)), kind_(kind), adjacency_(std::move(adjacency)) {}

absl::StatusOr<NeighbourhoodGraph> NeighbourhoodGraph::Create(const SessionConfig& config) {
  RETURN_IF_ERROR(ValidateSessionConfig(config));
  std::vector<std::vector<size_t>> adjacency;
  if (config.graph == GraphKind::kHarary) {
    const std::vector<size_t> ring = RingOrder(config);
    adjacency.resize(ring.size());
    for (size_t p = 0; p < ring.size(); ++p) {
      adjacency[ring[p]] = HararyNeighboursAt(ring, p, config.degree);
    }
  }
  return NeighbourhoodGraph(config.roster, config.graph, std::move(adjacency));
}

absl::StatusOr<std::vector<DeviceId>> NeighbourhoodGraph::NeighboursOf(const SessionConfig& config,
                                                                       DeviceId device) {
  RETURN_IF_ERROR(ValidateSessionConfig(config));
  const auto it = std::lower_bound(config.roster.begin(), config.roster.end(), device);
  if (it == config.roster.end() || *it != device) {
    return absl::NotFoundError(absl::StrCat("secagg: device ", device, " is not in the roster"));
  }
  const size_t index = static_cast<size_t>(it - config.roster.begin());
  std::vector<DeviceId> out;
  if (config.graph == GraphKind::kComplete) {
    out.reserve(config.roster.size() - 1);
    for (size_t j = 0; j < config.roster.size(); ++j) {
      if (j != index) out.push_back(config.roster[j]);
    }
    return out;
  }
  const std::vector<size_t> ring = RingOrder(config);
  const size_t p = static_cast<size_t>(std::find(ring.begin(), ring.end(), index) - ring.begin());
  for (size_t j : HararyNeighboursAt(ring, p, config.degree)) out.push_back(config.roster[j]);
  return out;  // sorted: roster indices are sorted and the roster is sorted
}

std::optional<size_t> NeighbourhoodGraph::IndexOf(DeviceId device) const {
  const auto it = std::lower_bound(roster_.begin(), roster_.end(), device);
  if (it == roster_.end() || *it != device) return std::nullopt;
  return static_cast<size_t>(it - roster_.begin());
}

std::vector<size_t> NeighbourhoodGraph::NeighbourIndices(size_t index) const {
  if (kind_ == GraphKind::kHarary) return adjacency_[index];
  std::vector<size_t> out;
  out.reserve(roster_.size() - 1);
  for (size_t j = 0; j < roster_.size(); ++j) {
    if (j != index) out.push_back(j);
  }
  return out;
}

}  // namespace fedmf::secagg
