#include "tests/integration/round_gate.h"

#include "common/base/status_macros.h"

namespace fedmf::it {

absl::StatusOr<std::unique_ptr<RoundGate>> RoundGate::Create(int parties, int64_t shared_values) {
  if (parties < 1 || shared_values < 1) {
    return absl::InvalidArgumentError("RoundGate needs at least one party and one shared value");
  }
  std::unique_ptr<RoundGate> gate(new RoundGate(shared_values * 4));
  for (int k = 0; k < parties; ++k) {
    ASSIGN_OR_RETURN(auto proxy, TcpProxy::Start());
    gate->proxies_.push_back(std::move(proxy));
  }
  return gate;
}

void RoundGate::Configure(cluster::ClusterOptions& options) const {
  for (int k = 0; k < static_cast<int>(proxies_.size()); ++k) {
    options.party_dial_server[k] = proxies_[k]->address();
  }
}

void RoundGate::Forward(int server_port) {
  for (auto& p : proxies_) p->Forward(server_port);
}

void RoundGate::HoldAfterRounds(int rounds) {
  proxies_[0]->PauseAfterDownstream(rounds * round_bytes_);
}

bool RoundGate::WaitHeld(absl::Duration timeout) { return proxies_[0]->WaitPaused(timeout); }

void RoundGate::Release() { proxies_[0]->Resume(); }

}  // namespace fedmf::it
