// The server's handling of secure-aggregation messages (LflJob::SubmitOne:
// net::ClientMessageFromProto, then secagg::ServerStateMachine::Receive),
// with an adversarial device in a live aggregation.
//
// Each run is one aggregation of 5 devices: 4 honest client state machines
// (fixed seeds and inputs) and device 50, whose every message comes from the
// fuzz input, as may messages claiming ids outside the roster. Ids of honest
// devices are refused before decoding, as the daemon's host check does (a
// host cannot speak for another host's device). Input: [graph/bits byte],
// then per phase [count byte] and `count` records, each a serialized
// v1::DeviceMessage (tests/fuzz/fuzz_input.h), delivered before or after
// the honest messages.
// Properties: no crash; the server ends Completed or Aborted (with a
// reason); survivor sets shrink U1 ⊇ U2 ⊇ U3 ⊇ U4; and whenever the
// adversary is not in U3 the sum is exactly that of the included honest
// inputs — an attacker can make the aggregation abort, never corrupt it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/crypto/mod2k.h"
#include "common/lfl/wire/secagg_codec.h"
#include "common/random/csprng.h"
#include "common/secagg/client_state_machine.h"
#include "common/secagg/server_state_machine.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace fedmf;  // NOLINT: a fuzz target, one function
using fedmf::fuzz::Check;

constexpr secagg::DeviceId kAdversary = 50;
constexpr size_t kLength = 3;

secagg::SessionConfig Config(uint8_t choice) {
  secagg::SessionConfig c;
  c.aggregation_id = 7;
  c.roster = {10, 20, 30, 40, kAdversary};
  if (choice & 1) {
    c.graph = secagg::GraphKind::kHarary;
    c.degree = 2;
    c.graph_seed = 11;
    c.threshold = 2;
    c.min_survivors = 2;
  } else {
    c.graph = secagg::GraphKind::kComplete;
    c.threshold = 3;
    c.min_survivors = 3;
  }
  c.vector_length = kLength;
  c.bits = 1 + (choice >> 1) % 64;
  return c;
}

bool Honest(uint64_t id) { return id == 10 || id == 20 || id == 30 || id == 40; }

std::vector<uint64_t> InputOf(secagg::DeviceId id, int bits) {
  std::vector<uint64_t> x(kLength);
  for (size_t k = 0; k < kLength; ++k) x[k] = (id * 1000003 + k * 7919) & crypto::LowBitsMask(bits);
  return x;
}

// The adversary's messages of one phase, through the daemon's edge checks.
void Inject(fuzz::FuzzInput& in, int count, const secagg::SessionConfig& config,
            secagg::ServerStateMachine& server) {
  for (int k = 0; k < count; ++k) {
    v1::DeviceMessage m;
    if (!in.Parse(&m)) continue;
    if (Honest(m.device())) continue;  // refused by the host check
    auto msg = net::ClientMessageFromProto(m, config);
    if (!msg.ok()) continue;
    (void)server.Receive(*msg);
    Check(server.state() != secagg::ServerState::kCompleted);  // Receive never moves state
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fedmf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  const secagg::SessionConfig config = Config(in.Byte());
  auto server = secagg::ServerStateMachine::Create(config, random::Csprng::FromSeed(1));
  Check(server.ok());

  std::map<secagg::DeviceId, secagg::ClientStateMachine> clients;
  std::map<secagg::DeviceId, secagg::ClientMessage> outbox;
  for (secagg::DeviceId id : config.roster) {
    if (!Honest(id)) continue;
    auto c = secagg::ClientStateMachine::Create(config, id, random::Csprng::FromSeed(id));
    Check(c.ok());
    Check(c->SetInput(InputOf(id, config.bits)).ok());
    auto first = c->Start();
    Check(first.ok());
    outbox.emplace(id, std::move(*first));
    clients.emplace(id, std::move(*c));
  }

  for (int phase = 0; phase < 4; ++phase) {
    const uint8_t plan = in.Byte();
    const int count = plan % 4;
    const bool adversary_first = (plan & 4) != 0;
    if (adversary_first) Inject(in, count, config, *server);
    for (auto& [id, m] : outbox) (void)server->Receive(m);
    outbox.clear();
    if (!adversary_first) Inject(in, count, config, *server);
    auto next = server->ClosePhase();
    Check(next.ok());
    for (const secagg::ServerMessage& m : *next) {
      const secagg::DeviceId to = secagg::HeaderOf(m).recipient;
      if (to == kAdversary) {
        // What device 50's host would receive: the wire codec must round-trip.
        Check(
            net::ServerMessageFromProto(net::ServerMessageToProto(m), config.aggregation_id).ok());
        continue;
      }
      auto it = clients.find(to);
      Check(it != clients.end());
      auto reply = it->second.Handle(m);
      if (reply.ok() && reply->has_value()) outbox.emplace(to, std::move(**reply));
    }
    if (server->state() == secagg::ServerState::kAborted) break;
  }

  const secagg::ServerState state = server->state();
  Check(state == secagg::ServerState::kCompleted || state == secagg::ServerState::kAborted);
  if (state == secagg::ServerState::kAborted) {
    Check(!server->abort_reason().ok());
    return 0;
  }
  for (int p = 1; p < 4; ++p) {
    const auto bigger = server->Survivors(static_cast<secagg::Phase>(p - 1));
    const auto smaller = server->Survivors(static_cast<secagg::Phase>(p));
    Check(std::includes(bigger.begin(), bigger.end(), smaller.begin(), smaller.end()));
  }
  auto result = server->Result();
  Check(result.ok());
  Check(static_cast<int>(result->included.size()) >= config.min_survivors);
  Check(result->sum.size() == kLength);
  if (std::find(result->included.begin(), result->included.end(), kAdversary) !=
      result->included.end()) {
    return 0;  // its input is whatever it chose; nothing to compare
  }
  std::vector<uint64_t> expected(kLength, 0);
  for (secagg::DeviceId id : result->included) {
    Check(Honest(id));
    Check(crypto::AddMod2k(expected, InputOf(id, config.bits), config.bits).ok());
  }
  Check(expected == result->sum);
  return 0;
}
