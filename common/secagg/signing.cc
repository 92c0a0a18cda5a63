#include "common/secagg/signing.h"

#include <map>
#include <memory>
#include <string_view>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/base/status_macros.h"
#include "common/secagg/graph.h"

namespace fedmf::secagg {
namespace {

void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int b = 7; b >= 0; --b) out.push_back(static_cast<uint8_t>(v >> (8 * b)));
}

// Length-prefixed, so no two different field sequences give the same bytes.
void PutBytes(std::vector<uint8_t>& out, std::span<const uint8_t> bytes) {
  PutU64(out, bytes.size());
  out.insert(out.end(), bytes.begin(), bytes.end());
}

void PutLabel(std::vector<uint8_t>& out, std::string_view label) {
  PutU64(out, label.size());
  out.insert(out.end(), label.begin(), label.end());
}

}  // namespace

std::vector<uint8_t> AdvertisementStatement(uint64_t aggregation_id, DeviceId device,
                                            std::span<const uint8_t> c_pk,
                                            std::span<const uint8_t> s_pk,
                                            std::span<const uint8_t> signing_key) {
  std::vector<uint8_t> out;
  PutLabel(out, "fedmf secagg advertise-keys v1");
  PutU64(out, aggregation_id);
  PutU64(out, device);
  PutBytes(out, c_pk);
  PutBytes(out, s_pk);
  PutBytes(out, signing_key);
  return out;
}

std::vector<uint8_t> SurvivorSetStatement(uint64_t aggregation_id,
                                          std::span<const DeviceId> survivors) {
  std::vector<uint8_t> out;
  out.reserve(64 + 8 * survivors.size());
  PutLabel(out, "fedmf secagg consistency-check v1");
  PutU64(out, aggregation_id);
  PutU64(out, survivors.size());
  for (DeviceId d : survivors) PutU64(out, d);
  return out;
}

struct CredentialCache::State {
  absl::Mutex mu;
  std::map<std::tuple<DeviceId, crypto::Ed25519PublicKey, std::vector<uint8_t>>, std::string>
      accepted ABSL_GUARDED_BY(mu);
};

KeyCertifier CredentialCache::Wrap(KeyCertifier inner) {
  if (state_ == nullptr) state_ = std::make_shared<State>();
  return [state = state_, inner = std::move(inner)](
             DeviceId device, const crypto::Ed25519PublicKey& key,
             std::span<const uint8_t> credential) -> absl::StatusOr<std::string> {
    auto entry =
        std::make_tuple(device, key, std::vector<uint8_t>(credential.begin(), credential.end()));
    {
      absl::MutexLock lock(&state->mu);
      const auto it = state->accepted.find(entry);
      if (it != state->accepted.end()) return it->second;
    }
    absl::StatusOr<std::string> host = inner(device, key, credential);
    if (host.ok()) {
      absl::MutexLock lock(&state->mu);
      state->accepted.emplace(std::move(entry), *host);
    }
    return host;
  };
}

absl::Status CheckHostCollusion(const SessionConfig& config,
                                const std::vector<std::string>& host_of) {
  if (host_of.size() != config.roster.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host map has ", host_of.size(), " entries for a roster of ", config.roster.size()));
  }
  ASSIGN_OR_RETURN(NeighbourhoodGraph graph, NeighbourhoodGraph::Create(config));
  for (size_t i = 0; i < config.roster.size(); ++i) {
    std::map<std::string, int> per_host;
    const auto neighbours = graph.NeighbourIndices(i);
    for (size_t j : neighbours) {
      if (host_of[j] != host_of[i]) ++per_host[host_of[j]];
    }
    const size_t holders = neighbours.size() + 1;
    for (const auto& [host, count] : per_host) {
      if (!HostCollusionBound(static_cast<size_t>(config.threshold), holders,
                              static_cast<size_t>(count))) {
        return absl::FailedPreconditionError(absl::StrCat(
            "secagg: device ", config.roster[i], " (host '", host_of[i], "') has ", count,
            " neighbours on host '", host, "' of ", holders,
            " share holders, but the threshold is ", config.threshold, " (needs ", count,
            " < t and 2t > holders + ", count,
            "): that host and an equivocating server together could reconstruct its secrets. ",
            "Spread the devices over more hosts, raise the threshold, or lower the degree"));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<uint8_t> KeyBindingStatement(std::string_view job, DeviceId device,
                                         std::span<const uint8_t> signing_key) {
  std::vector<uint8_t> out;
  PutLabel(out, "fedmf secagg device-key binding v1");
  PutLabel(out, job);
  PutU64(out, device);
  PutBytes(out, signing_key);
  return out;
}

}  // namespace fedmf::secagg
