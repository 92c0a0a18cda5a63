// Sessions (common/secagg/session.h): one key setup, many aggregations.
#include "common/secagg/session.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "common/crypto/aes_ctr_prg.h"
#include "common/crypto/mod2k.h"
#include "common/crypto/secret_bytes.h"
#include "common/random/csprng.h"
#include "common/secagg/client_state_machine.h"
#include "common/secagg/graph.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/mask.h"
#include "common/secagg/server_state_machine.h"
#include "common/secagg/simulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::secagg {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

SimulationSpec SessionSpec(std::shared_ptr<SimulatedSession> session, uint64_t seed,
                           size_t n = 40) {
  SimulationSpec spec;
  spec.num_devices = n;
  spec.vector_length = 64;
  spec.bits = 32;
  spec.seed = seed;
  spec.session = std::move(session);
  return spec;
}

// Runs one aggregation and checks the server's sum is exactly the sum of
// the inputs it included.
SimulationResult RunAndCheck(const SimulationSpec& spec) {
  absl::StatusOr<SimulationResult> r = Simulate(spec);
  EXPECT_THAT(r.status(), IsOk());
  if (!r.ok()) return {};
  EXPECT_EQ(r->server_state, ServerState::kCompleted) << r->abort_reason;
  EXPECT_EQ(r->sum, r->expected_sum);
  return *std::move(r);
}

std::vector<DeviceId> Ids(const std::vector<DeviceId>& roster, std::vector<size_t> indices) {
  std::vector<DeviceId> out;
  for (size_t i : indices) out.push_back(roster[i]);
  return out;
}

TEST(SessionTest, EveryAggregationSumsExactlyWhileDifferentDevicesDrop) {
  auto session = std::make_shared<SimulatedSession>();
  const std::vector<DeviceId> roster = SimulationRoster(40);
  // Each aggregation loses different devices at different points; a device
  // that dropped (and had its round seeds revealed) is back the next time.
  std::vector<DropoutPlan> plans(5);
  plans[1].after_share_keys = Ids(roster, {1, 2});
  plans[1].after_masked_input = Ids(roster, {3});
  plans[2].after_advertise = Ids(roster, {4});
  plans[2].after_share_keys = Ids(roster, {5, 6, 7});
  plans[3].before_advertise = Ids(roster, {1});
  plans[3].during_unmasking = Ids(roster, {2, 8});
  plans[4].after_share_keys = Ids(roster, {1, 2, 3, 5});
  std::optional<uint64_t> last_id;
  for (size_t r = 0; r < plans.size(); ++r) {
    SimulationSpec spec = SessionSpec(session, 100 + r);
    spec.dropouts = plans[r];
    SimulationResult res = RunAndCheck(spec);
    if (last_id.has_value()) {
      EXPECT_EQ(res.config.aggregation_id, *last_id + 1);
    }
    last_id = res.config.aggregation_id;
    size_t missing = plans[r].before_advertise.size() + plans[r].after_advertise.size() +
                     plans[r].after_share_keys.size();
    EXPECT_EQ(res.included.size(), 40 - missing) << "aggregation " << r;
  }
  EXPECT_TRUE(session->server->established());
}

TEST(SessionTest, ActiveServerSessionSumsExactly) {
  auto session = std::make_shared<SimulatedSession>();
  const std::vector<DeviceId> roster = SimulationRoster(30);
  for (uint64_t r = 0; r < 3; ++r) {
    SimulationSpec spec = SessionSpec(session, 7 + r, 30);
    spec.signing = true;
    spec.signing_seed = 99;
    spec.requirements.adversary = AdversaryModel::kSemiMalicious;
    if (r == 1) spec.dropouts.after_share_keys = Ids(roster, {0, 9});
    RunAndCheck(spec);
  }
}

TEST(SessionTest, RoundsAfterTheSetupAgreeNoKeysAndSendNone) {
  auto session = std::make_shared<SimulatedSession>();
  SimulationResult setup = RunAndCheck(SessionSpec(session, 1));
  SimulationResult later = RunAndCheck(SessionSpec(session, 2));
  // The setup's advertisements carry two 32-byte X25519 keys per device;
  // later check-ins are bare headers, and the broadcasts name neighbours
  // without keys. Every other message is the same size.
  EXPECT_EQ(setup.upload_bytes - later.upload_bytes, 40 * 64u);
  EXPECT_LT(later.download_bytes, setup.download_bytes);
}

TEST(SessionTest, DeviceAbsentAtTheSetupStaysOutOfTheSession) {
  auto session = std::make_shared<SimulatedSession>();
  const std::vector<DeviceId> roster = SimulationRoster(40);
  SimulationSpec setup = SessionSpec(session, 1);
  setup.dropouts.before_advertise = Ids(roster, {5});
  setup.dropouts.after_advertise = Ids(roster, {6});  // advertised, never got the neighbours' keys
  RunAndCheck(setup);
  SimulationResult later = RunAndCheck(SessionSpec(session, 2));
  EXPECT_EQ(later.included.size(), 38u);
  EXPECT_FALSE(std::binary_search(later.included.begin(), later.included.end(), roster[5]));
  EXPECT_FALSE(std::binary_search(later.included.begin(), later.included.end(), roster[6]));
  EXPECT_FALSE(session->devices[6]->established());
}

// What the dropout recovery of one aggregation reveals does not open the
// same device's masked input of the next: the recovered round seeds are
// those of that aggregation only. An adversary holding device d's round-r
// seeds, b_d^{r+1} and every other secret of round r+1 except d's round
// seeds still cannot strip d's pairwise masks of round r+1.
TEST(SessionTest, RoundSeedsOfOneAggregationDoNotRepeatInTheNext) {
  const std::vector<uint8_t> key(32, 0x5A);
  absl::StatusOr<crypto::SecretBytes> r1 = DeriveRoundMaskSeed(key, 10, 3, 7);
  absl::StatusOr<crypto::SecretBytes> r1_swapped = DeriveRoundMaskSeed(key, 10, 7, 3);
  absl::StatusOr<crypto::SecretBytes> r2 = DeriveRoundMaskSeed(key, 11, 3, 7);
  ASSERT_THAT(r1.status(), IsOk());
  ASSERT_THAT(r2.status(), IsOk());
  EXPECT_TRUE(*r1 == *r1_swapped);  // both ends derive the same seed
  EXPECT_FALSE(*r1 == *r2);
  // The masks themselves differ in (essentially) every coordinate.
  std::vector<uint64_t> a(256, 0), b(256, 0);
  ASSERT_THAT(ApplyMask(r1->span(), 32, crypto::MaskSign::kAdd, a), IsOk());
  ASSERT_THAT(ApplyMask(r2->span(), 32, crypto::MaskSign::kAdd, b), IsOk());
  size_t equal = 0;
  for (size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i] ? 1 : 0;
  EXPECT_LE(equal, 1u);
  // A pad opens with the recovery key it was made with, and only with it.
  const std::vector<uint8_t> e(32, 0x11), e2(32, 0x12);
  absl::StatusOr<crypto::SecretBytes> pad = DeriveRecoveryPad(e, 10, 3, 7);
  absl::StatusOr<crypto::SecretBytes> wrong = DeriveRecoveryPad(e2, 10, 3, 7);
  ASSERT_THAT(pad.status(), IsOk());
  const crypto::SecretBytes hidden = XorSecret(r1->span(), pad->span());
  EXPECT_TRUE(XorSecret(hidden.span(), pad->span()) == *r1);
  EXPECT_FALSE(XorSecret(hidden.span(), wrong->span()) == *r1);
}

// The server's view of the dropped device's NEXT masked input: run the same
// session twice, identical except for that device's input in the next
// aggregation; everything the server saw in the first aggregation (and
// every other device's message in the second) is bit-identical, and the
// device's masked vector moved by exactly the input difference — so nothing
// revealed earlier tells the two inputs apart beyond that shift, which is
// uniform under the fresh round masks.
constexpr size_t kDroppedDevice = 4;

TEST(SessionTest, ServerViewOfTheNextAggregationHidesTheInputOfADeviceThatDropped) {
  const std::vector<DeviceId> roster = SimulationRoster(20);
  const auto run = [&](uint64_t fill) {
    auto session = std::make_shared<SimulatedSession>();
    SimulationSpec s1 = SessionSpec(session, 5, 20);
    s1.dropouts.after_share_keys = Ids(roster, {kDroppedDevice});
    s1.record_masked_inputs = true;
    RunAndCheck(s1);
    SimulationSpec s2 = SessionSpec(session, 6, 20);
    s2.record_masked_inputs = true;
    s2.input = [fill](size_t index, DeviceId id) {
      if (index == kDroppedDevice) return std::vector<uint64_t>(64, fill);
      return SimulationInput(6, id, 64, 32);
    };
    return RunAndCheck(s2);
  };
  SimulationResult a = run(0), b = run(12345);
  const DeviceId target = roster[kDroppedDevice];
  for (const auto& [id, y] : a.masked_inputs) {
    if (id != target) {
      EXPECT_EQ(y, b.masked_inputs.at(id)) << id;
    }
  }
  const std::vector<uint64_t>& ya = a.masked_inputs.at(target);
  const std::vector<uint64_t>& yb = b.masked_inputs.at(target);
  for (size_t i = 0; i < ya.size(); ++i) {
    EXPECT_EQ((yb[i] - ya[i]) & crypto::LowBitsMask(32), 12345u) << i;
  }
  // And that masked vector is not the input under the previous
  // aggregation's revealed seeds: it is far from the input.
  size_t equal = 0;
  for (uint64_t v : ya) equal += v == 0 ? 1 : 0;
  EXPECT_LE(equal, 1u);
}

// ---- what a device refuses

struct Established {
  std::shared_ptr<SimulatedSession> session;
  SessionConfig next;  // a valid config for the next aggregation
};

Established EstablishSession(size_t n = 12) {
  Established out;
  out.session = std::make_shared<SimulatedSession>();
  SimulationSpec spec = SessionSpec(out.session, 3, n);
  RunAndCheck(spec);
  out.next = *out.session->setup;
  out.next.aggregation_id = out.session->last_aggregation_id + 1;
  return out;
}

TEST(SessionClientTest, RefusesARepeatedOrOlderAggregationId) {
  Established e = EstablishSession();
  std::shared_ptr<ClientSession> device = e.session->devices[0];
  SessionConfig repeated = e.next;
  repeated.aggregation_id = e.session->last_aggregation_id;
  EXPECT_THAT(ClientStateMachine::CreateInSession(repeated, repeated.roster[0],
                                                  random::Csprng::FromSeed(1), device)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not above")));
  repeated.aggregation_id = 0;
  EXPECT_THAT(ClientStateMachine::CreateInSession(repeated, repeated.roster[0],
                                                  random::Csprng::FromSeed(1), device)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not above")));
  // The server keeps the same rule for itself.
  EXPECT_THAT(
      ServerStateMachine::CreateInSession(repeated, random::Csprng::FromSeed(1), e.session->server)
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not above")));
  // A valid id is accepted once; the same id again is refused.
  ASSERT_THAT(ClientStateMachine::CreateInSession(e.next, e.next.roster[0],
                                                  random::Csprng::FromSeed(1), device)
                  .status(),
              IsOk());
  EXPECT_THAT(ClientStateMachine::CreateInSession(e.next, e.next.roster[0],
                                                  random::Csprng::FromSeed(1), device)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// Later rounds take N(self) from the setup instead of recomputing the graph:
// it must be the graph's, and a session serves only its own device.
TEST(SessionClientTest, KeepsTheSetupsNeighbourhoodForItsOwnDeviceOnly) {
  Established e = EstablishSession();
  for (size_t i : {size_t{0}, size_t{11}}) {
    const ClientSession& device = *e.session->devices[i];
    EXPECT_EQ(device.self(), e.next.roster[i]);
    ASSERT_OK_AND_ASSIGN(auto expected, NeighbourhoodGraph::NeighboursOf(e.next, e.next.roster[i]));
    EXPECT_EQ(device.neighbours(), expected) << i;
    auto round = ClientStateMachine::CreateInSession(
        e.next, e.next.roster[i], random::Csprng::FromSeed(1), e.session->devices[i]);
    ASSERT_THAT(round.status(), IsOk());
    EXPECT_EQ(round->neighbours(), expected) << i;
  }
  ++e.next.aggregation_id;  // device 0 has started e.next's id above
  EXPECT_THAT(ClientStateMachine::CreateInSession(
                  e.next, e.next.roster[1], random::Csprng::FromSeed(1), e.session->devices[0])
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("belongs to device")));
  SessionConfig invalid = e.next;  // still validated without the graph
  invalid.vector_length = 0;
  EXPECT_THAT(ClientStateMachine::CreateInSession(
                  invalid, invalid.roster[0], random::Csprng::FromSeed(1), e.session->devices[0])
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SessionClientTest, RefusesAGraphOrThresholdOtherThanTheSetups) {
  Established e = EstablishSession();
  std::shared_ptr<ClientSession> device = e.session->devices[0];
  SessionConfig c = e.next;
  c.threshold -= 1;
  EXPECT_THAT(
      ClientStateMachine::CreateInSession(c, c.roster[0], random::Csprng::FromSeed(1), device)
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("threshold differs")));
  c = e.next;
  c.graph_seed += 1;
  EXPECT_THAT(
      ClientStateMachine::CreateInSession(c, c.roster[0], random::Csprng::FromSeed(1), device)
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("graph_seed differs")));
}

// Drives device 0 of an established session to its ShareKeys step with a
// broadcast the test writes.
absl::StatusOr<std::optional<ClientMessage>> AnswerBroadcast(Established& e,
                                                             KeysBroadcast broadcast,
                                                             ClientStateMachine* out = nullptr) {
  absl::StatusOr<ClientStateMachine> client = ClientStateMachine::CreateInSession(
      e.next, e.next.roster[0], random::Csprng::FromSeed(2), e.session->devices[0]);
  if (!client.ok()) return client.status();
  absl::StatusOr<ClientMessage> check_in = client->Start();
  if (!check_in.ok()) return check_in.status();
  const auto& advert = std::get<AdvertiseKeys>(*check_in);
  EXPECT_TRUE(advert.c_pk.empty() && advert.s_pk.empty() && advert.signature.empty());
  broadcast.header = {e.next.aggregation_id, kServerId, e.next.roster[0], Phase::kShareKeys};
  auto reply = client->Handle(ServerMessage(broadcast));
  if (out != nullptr) *out = std::move(*client);
  return reply;
}

KeysBroadcast SessionNeighbours(const Established& e) {
  KeysBroadcast b;
  for (const ClientSession::Peer& p : e.session->devices[0]->peers()) {
    NeighbourKeys nk;
    nk.device = p.id;
    b.neighbours.push_back(nk);
  }
  return b;
}

TEST(SessionClientTest, SharesWithTheLiveSessionNeighboursAndPadsEveryRoundSeed) {
  Established e = EstablishSession();
  KeysBroadcast b = SessionNeighbours(e);
  ASSERT_GE(b.neighbours.size(), 2u);
  b.neighbours.pop_back();  // one neighbour did not check in
  auto reply = AnswerBroadcast(e, b);
  ASSERT_THAT(reply.status(), IsOk());
  ASSERT_TRUE(reply->has_value());
  const auto& share = std::get<ShareKeys>(**reply);
  EXPECT_EQ(share.shares.size(), b.neighbours.size());
  EXPECT_EQ(share.mask_pads.size(), b.neighbours.size());
  EXPECT_EQ(share.recovery_commitment.size(), kCommitmentBytes);
  // A pad is not the round seed itself (it is hidden under HKDF(e)).
  const ClientSession::Peer* peer = e.session->devices[0]->FindPeer(share.mask_pads[0].peer);
  ASSERT_NE(peer, nullptr);
  absl::StatusOr<crypto::SecretBytes> seed =
      DeriveRoundMaskSeed(peer->mask_key.span(), e.next.aggregation_id, e.next.roster[0], peer->id);
  ASSERT_THAT(seed.status(), IsOk());
  EXPECT_FALSE(crypto::ConstantTimeEquals(share.mask_pads[0].pad, seed->span()));
}

TEST(SessionClientTest, AbortsWhenARoundBroadcastCarriesKeys) {
  Established e = EstablishSession();
  KeysBroadcast b = SessionNeighbours(e);
  b.neighbours[0].c_pk.assign(32, 9);
  b.neighbours[0].s_pk.assign(32, 10);
  ClientStateMachine client =
      *ClientStateMachine::Create(e.next, e.next.roster[0], random::Csprng::FromSeed(1));
  EXPECT_THAT(AnswerBroadcast(e, b, &client).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("carries keys")));
  EXPECT_EQ(client.state(), ClientState::kAborted);
}

TEST(SessionClientTest, AbortsWhenTheServerAddsANeighbourOutsideTheSession) {
  Established e = EstablishSession();
  KeysBroadcast b = SessionNeighbours(e);
  // A roster device that is not device 0's session neighbour.
  std::optional<DeviceId> stranger;
  for (DeviceId id : e.next.roster) {
    if (id != e.next.roster[0] && e.session->devices[0]->FindPeer(id) == nullptr) stranger = id;
  }
  ASSERT_TRUE(stranger.has_value());
  b.neighbours[0].device = *stranger;
  EXPECT_THAT(AnswerBroadcast(e, b).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("did not complete the session's setup")));
}

// ---- what the server refuses

TEST(SessionServerTest, RejectsKeysInACheckInAndShareKeysWithoutPads) {
  Established e = EstablishSession();
  absl::StatusOr<ServerStateMachine> server =
      ServerStateMachine::CreateInSession(e.next, random::Csprng::FromSeed(4), e.session->server);
  ASSERT_THAT(server.status(), IsOk());
  std::vector<ClientStateMachine> clients;
  for (size_t i = 0; i < e.next.roster.size(); ++i) {
    clients.push_back(*ClientStateMachine::CreateInSession(
        e.next, e.next.roster[i], random::Csprng::FromSeed(10 + i), e.session->devices[i]));
  }
  // Device 1 checks in with keys: rejected, and it is out of this aggregation.
  AdvertiseKeys with_keys;
  with_keys.header = {e.next.aggregation_id, e.next.roster[1], kServerId, Phase::kAdvertiseKeys};
  with_keys.c_pk.assign(32, 1);
  with_keys.s_pk.assign(32, 2);
  EXPECT_THAT(server->Receive(ClientMessage(with_keys)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("check-in")));
  for (size_t i = 0; i < clients.size(); ++i) {
    if (i == 1) continue;
    ASSERT_THAT(server->Receive(*clients[i].Start()), IsOk());
  }
  absl::StatusOr<std::vector<ServerMessage>> broadcasts = server->ClosePhase();
  ASSERT_THAT(broadcasts.status(), IsOk());
  bool tampered = false;
  for (const ServerMessage& m : *broadcasts) {
    const size_t i = static_cast<size_t>(
        std::find(e.next.roster.begin(), e.next.roster.end(), HeaderOf(m).recipient) -
        e.next.roster.begin());
    for (const NeighbourKeys& nk : std::get<KeysBroadcast>(m).neighbours) {
      EXPECT_TRUE(nk.c_pk.empty() && nk.s_pk.empty());
      EXPECT_NE(nk.device, e.next.roster[1]);
    }
    auto reply = clients[i].Handle(m);
    ASSERT_THAT(reply.status(), IsOk());
    ShareKeys share = std::get<ShareKeys>(**reply);
    if (!tampered) {
      share.mask_pads.pop_back();
      EXPECT_THAT(server->Receive(ClientMessage(share)),
                  StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mask pads")));
      tampered = true;
      continue;
    }
    EXPECT_THAT(server->Receive(ClientMessage(share)), IsOk());
  }
}

}  // namespace
}  // namespace fedmf::secagg
