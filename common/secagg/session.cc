#include "common/secagg/session.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fedmf::secagg {

absl::Status CheckSessionRound(const std::optional<SessionConfig>& setup,
                               std::optional<uint64_t> last, const SessionConfig& config) {
  if (!setup.has_value()) {
    // Not established: only the setup aggregation itself may start, once.
    if (last.has_value()) {
      return absl::FailedPreconditionError(
          "the session's setup aggregation did not complete; start a new session");
    }
    return absl::OkStatus();
  }
  if (last.has_value() && config.aggregation_id <= *last) {
    return absl::InvalidArgumentError(absl::StrCat(
        "aggregation_id ", config.aggregation_id, " is not above ", *last,
        ", the last one of this session: a repeated id would repeat the pairwise masks"));
  }
  const auto differs = [](const char* field) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " differs from the session's setup; start a new session to change it"));
  };
  if (config.roster != setup->roster) return differs("roster");
  if (config.graph != setup->graph) return differs("graph");
  if (config.degree != setup->degree) return differs("degree");
  if (config.graph_seed != setup->graph_seed) return differs("graph_seed");
  if (config.threshold != setup->threshold) return differs("threshold");
  if (config.consistency_check != setup->consistency_check) return differs("consistency_check");
  return absl::OkStatus();
}

bool SessionShouldBeRenewed(int64_t out, int64_t n, int64_t min_survivors) {
  return out > std::max<int64_t>(0, (n - min_survivors) / 2);
}

const ClientSession::Peer* ClientSession::FindPeer(DeviceId id) const {
  const auto it = std::lower_bound(peers_.begin(), peers_.end(), id,
                                   [](const Peer& p, DeviceId d) { return p.id < d; });
  return it != peers_.end() && it->id == id ? &*it : nullptr;
}

absl::Status ClientSession::CheckRound(const SessionConfig& config, bool signing) const {
  if (established() && signing != signing_) {
    return absl::InvalidArgumentError(
        "signing mode differs from the session's setup; start a new session to change it");
  }
  return CheckSessionRound(config_, last_aggregation_id_, config);
}

void ClientSession::Establish(
    SessionConfig config, DeviceId self, std::vector<DeviceId> neighbours, bool signing,
    std::vector<Peer> peers,
    std::vector<std::pair<DeviceId, crypto::Ed25519PublicKey>> signing_keys) {
  config_ = std::move(config);
  self_ = self;
  neighbours_ = std::move(neighbours);
  signing_ = signing;
  peers_ = std::move(peers);
  peer_signing_keys_ = std::move(signing_keys);
}

absl::Status ServerSession::CheckRound(const SessionConfig& config) const {
  return CheckSessionRound(config_, last_aggregation_id_, config);
}

bool ServerSession::IsMember(DeviceId device) const {
  if (!established()) return false;
  const auto it = std::lower_bound(config_->roster.begin(), config_->roster.end(), device);
  return it != config_->roster.end() && *it == device &&
         members_[static_cast<size_t>(it - config_->roster.begin())] != 0;
}

void ServerSession::Establish(SessionConfig config, std::vector<char> members,
                              std::vector<std::vector<uint8_t>> signing_keys) {
  config_ = std::move(config);
  members_ = std::move(members);
  signing_keys_ = std::move(signing_keys);
}

}  // namespace fedmf::secagg
