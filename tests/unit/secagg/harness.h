// Step-by-step driver for tests: a server and n clients whose messages a
// test can inspect, drop, tamper with or add to between phases.
#ifndef FEDMF_TESTS_UNIT_SECAGG_HARNESS_H_
#define FEDMF_TESTS_UNIT_SECAGG_HARNESS_H_

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/mod2k.h"
#include "common/random/csprng.h"
#include "common/secagg/client_state_machine.h"
#include "common/secagg/config.h"
#include "common/secagg/server_state_machine.h"
#include "common/secagg/signing.h"
#include "common/secagg/simulate.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::secagg::testing {

inline SessionConfig MakeConfig(size_t n, GraphKind graph, int degree, int threshold,
                                int min_survivors, size_t length, int bits, uint64_t seed) {
  SessionConfig c;
  c.aggregation_id = 0xA99 + seed;
  c.roster = SimulationRoster(n);
  c.graph = graph;
  c.degree = graph == GraphKind::kHarary ? degree : 0;
  c.graph_seed = seed * 31 + 7;
  c.threshold = threshold;
  c.min_survivors = min_survivors;
  c.vector_length = length;
  c.bits = bits;
  return c;
}

class Harness {
 public:
  using Outbox = std::vector<std::optional<ClientMessage>>;

  // `signing`: every client defends against an active server (signing.h),
  // with signing keys certified by a test authority (authority()).
  // `host_of(i)`: the host of roster device i (default: one host per device).
  explicit Harness(SessionConfig config, uint64_t seed = 1, bool signing = false,
                   std::function<std::string(size_t)> host_of = nullptr)
      : config_(std::move(config)),
        server_(
            *ServerStateMachine::Create(config_, random::Csprng::FromSeed(seed).Fork("server"))),
        authority_(*crypto::Ed25519PrivateKey::FromSeed(std::vector<uint8_t>(32, 0xCA))),
        inbox_(config_.roster.size()) {
    for (size_t i = 0; i < config_.roster.size(); ++i) {
      const DeviceId id = config_.roster[i];
      random::Csprng rng = random::Csprng::FromSeed(seed).Fork("client/" + std::to_string(id));
      std::optional<ClientSigning> sign;
      if (signing) {
        random::Csprng key_rng = rng.Fork("signing");
        crypto::Ed25519PrivateKey key = *crypto::Ed25519PrivateKey::Generate(key_rng);
        const std::string host = host_of ? host_of(i) : absl::StrCat("host-", id);
        std::vector<uint8_t> credential = Certify(id, key.public_key(), host);
        sign = ClientSigning{std::move(key), std::move(credential), Certifier(), host};
      }
      clients_.push_back(*ClientStateMachine::Create(config_, id, std::move(rng), std::move(sign)));
      inputs_.push_back(SimulationInput(seed, id, config_.vector_length, config_.bits));
      EXPECT_TRUE(clients_.back().SetInput(inputs_.back()).ok());
    }
  }

  // The test stand-in for the host certificate chain: the credential is the
  // host name followed by the authority's signature over
  // KeyBindingStatement(job, device, key) with the host name as the job label
  // suffix; the certifier checks it and returns the host.
  std::vector<uint8_t> Certify(DeviceId id, const crypto::Ed25519PublicKey& key,
                               const std::string& host) const {
    std::vector<uint8_t> out(host.begin(), host.end());
    out.push_back(0);
    const std::vector<uint8_t> sig =
        *authority_.Sign(KeyBindingStatement(absl::StrCat("test-job/", host), id, key));
    out.insert(out.end(), sig.begin(), sig.end());
    return out;
  }
  KeyCertifier Certifier() const {
    const crypto::Ed25519PublicKey ca = authority_.public_key();
    return [ca](DeviceId device, const crypto::Ed25519PublicKey& key,
                std::span<const uint8_t> credential) -> absl::StatusOr<std::string> {
      const auto nul = std::find(credential.begin(), credential.end(), uint8_t{0});
      if (nul == credential.end()) return absl::UnauthenticatedError("malformed credential");
      std::string host(credential.begin(), nul);
      if (absl::Status s = crypto::Ed25519Verify(
              ca, KeyBindingStatement(absl::StrCat("test-job/", host), device, key),
              std::span<const uint8_t>(nul + 1, credential.end()));
          !s.ok()) {
        return s;
      }
      return host;
    };
  }

  size_t size() const { return clients_.size(); }
  DeviceId id(size_t i) const { return config_.roster[i]; }
  const SessionConfig& config() const { return config_; }
  ServerStateMachine& server() { return server_; }
  ClientStateMachine& client(size_t i) { return clients_[i]; }
  std::optional<ServerMessage>& inbox(size_t i) { return inbox_[i]; }
  const std::vector<uint64_t>& input(size_t i) const { return inputs_[i]; }

  // Phase 0: every client's AdvertiseKeys.
  Outbox Start() {
    Outbox out(size());
    for (size_t i = 0; i < size(); ++i) {
      auto m = clients_[i].Start();
      if (m.ok()) out[i] = std::move(*m);
    }
    return out;
  }
  // Later phases: every client with a pending server message answers it.
  Outbox Act() {
    Outbox out(size());
    for (size_t i = 0; i < size(); ++i) {
      if (!inbox_[i].has_value()) continue;
      auto reply = clients_[i].Handle(*inbox_[i]);
      inbox_[i].reset();
      if (reply.ok() && reply->has_value()) out[i] = std::move(**reply);
    }
    return out;
  }
  // Delivers to the server; returns the statuses of Receive, index-aligned.
  std::vector<absl::Status> Send(Outbox& out) {
    std::vector<absl::Status> st(out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].has_value()) st[i] = server_.Receive(*out[i]);
    }
    return st;
  }
  // Closes the phase and queues the server's messages per recipient.
  void Close() {
    ASSERT_OK_AND_ASSIGN(auto msgs, server_.ClosePhase());
    for (ServerMessage& m : msgs) {
      const DeviceId to = HeaderOf(m).recipient;
      const size_t i =
          static_cast<size_t>(std::lower_bound(config_.roster.begin(), config_.roster.end(), to) -
                              config_.roster.begin());
      inbox_[i] = std::move(m);
    }
  }
  // One full phase with no interference.
  void Phase(bool start = false) {
    Outbox out = start ? Start() : Act();
    Send(out);
    Close();
  }

  std::vector<uint64_t> ExpectedSum(const std::vector<DeviceId>& included) const {
    std::vector<uint64_t> sum(config_.vector_length, 0);
    for (DeviceId id : included) {
      const size_t i =
          static_cast<size_t>(std::lower_bound(config_.roster.begin(), config_.roster.end(), id) -
                              config_.roster.begin());
      EXPECT_TRUE(crypto::AddMod2k(sum, inputs_[i], config_.bits).ok());
    }
    return sum;
  }

 private:
  SessionConfig config_;
  ServerStateMachine server_;
  crypto::Ed25519PrivateKey authority_;
  std::vector<ClientStateMachine> clients_;
  std::vector<std::vector<uint64_t>> inputs_;
  std::vector<std::optional<ServerMessage>> inbox_;
};

}  // namespace fedmf::secagg::testing

#endif  // FEDMF_TESTS_UNIT_SECAGG_HARNESS_H_
