// A client against a dishonest or broken server: everything it cannot accept
// aborts that client only, and no request makes it reveal both shares of
// one device.
#include <algorithm>
#include <variant>

#include "common/secagg/client_state_machine.h"
#include "common/secagg/graph.h"
#include "gtest/gtest.h"
#include "harness.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::secagg {
namespace {

using testing::Harness;
using testing::MakeConfig;

SessionConfig ClientComplete(size_t n = 5, int t = 3) {
  return MakeConfig(n, GraphKind::kComplete, 0, t, t, 8, 16, 1);
}
SessionConfig ClientHarary() { return MakeConfig(14, GraphKind::kHarary, 4, 3, 8, 8, 16, 2); }

// Runs R0..R2 honestly; every client then holds an UnmaskingRequest.
void RunToUnmasking(Harness& h) {
  h.Phase(/*start=*/true);
  h.Phase();
  h.Phase();
  ASSERT_EQ(h.server().state(), ServerState::kR3Unmasking);
}

TEST(ClientTest, RefusesToRevealBothSharesOfOneDevice) {
  Harness h(ClientComplete());
  RunToUnmasking(h);
  auto& req = std::get<UnmaskingRequest>(*h.inbox(0));
  ASSERT_FALSE(req.survivors.empty());
  req.dropped.push_back(req.survivors.front());  // "j survived" and "j dropped"
  auto reply = h.client(0).Handle(*h.inbox(0));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kPermissionDenied) << reply.status();
  EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
  // Aborted means mute: a corrected request gets nothing either.
  std::get<UnmaskingRequest>(*h.inbox(0)).dropped.pop_back();
  EXPECT_THAT(h.client(0).Handle(*h.inbox(0)), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(ClientTest, AnswersOneUnmaskingRequestOnly) {
  Harness h(ClientComplete());
  RunToUnmasking(h);
  const ServerMessage honest = *h.inbox(0);
  ASSERT_OK_AND_ASSIGN(auto first, h.client(0).Handle(honest));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(h.client(0).state(), ClientState::kCompleted);
  // A second request — e.g. now claiming a survivor dropped, to get its
  // s_sk-share after having its b-share — is refused.
  ServerMessage second = honest;
  auto& req = std::get<UnmaskingRequest>(second);
  req.dropped.push_back(req.survivors.back());
  req.survivors.pop_back();
  auto again = h.client(0).Handle(second);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.client(0).state(), ClientState::kCompleted);
}

TEST(ClientTest, RevealsBSharesForSurvivorsAndSkSharesForDroppedOnly) {
  Harness h(ClientComplete(6, 3));
  h.Phase(true);
  h.Phase();
  auto out = h.Act();
  out[5].reset();  // device 5 shared keys but never sends its masked input
  h.Send(out);
  h.Close();
  auto reply = h.client(0).Handle(*h.inbox(0));
  ASSERT_TRUE(reply.ok() && reply->has_value());
  const auto& resp = std::get<UnmaskingResponse>(**reply);
  std::vector<DeviceId> b, s;
  for (const auto& rs : resp.b_shares) b.push_back(rs.owner);
  for (const auto& rs : resp.s_sk_shares) s.push_back(rs.owner);
  EXPECT_EQ(b, (std::vector<DeviceId>{h.id(0), h.id(1), h.id(2), h.id(3), h.id(4)}));
  EXPECT_EQ(s, (std::vector<DeviceId>{h.id(5)}));
}

TEST(ClientTest, RefusesUnmaskingSetsInconsistentWithWhatItSaw) {
  using Edit = void (*)(UnmaskingRequest&, DeviceId self);
  const Edit edits[] = {
      [](UnmaskingRequest& r, DeviceId) { r.survivors.pop_back(); },                 // one missing
      [](UnmaskingRequest& r, DeviceId) { r.survivors.push_back(424242); },          // a stranger
      [](UnmaskingRequest& r, DeviceId self) { r.dropped.push_back(self); },         // itself
      [](UnmaskingRequest& r, DeviceId) { r.survivors.push_back(r.survivors[0]); },  // twice
  };
  for (Edit edit : edits) {
    Harness h(ClientComplete());
    RunToUnmasking(h);
    edit(std::get<UnmaskingRequest>(*h.inbox(1)), h.id(1));
    auto reply = h.client(1).Handle(*h.inbox(1));
    EXPECT_THAT(reply, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_EQ(h.client(1).state(), ClientState::kAborted);
  }
}

TEST(ClientTest, RejectsBadKeyBroadcasts) {
  using Edit = void (*)(KeysBroadcast&, const Harness&);
  const Edit edits[] = {
      // A device that is not a neighbour in the Harary graph.
      [](KeysBroadcast& b, const Harness& h) {
        const auto nb = *NeighbourhoodGraph::NeighboursOf(h.config(), h.id(0));
        for (size_t i = 1; i < h.size(); ++i) {
          if (!std::binary_search(nb.begin(), nb.end(), h.id(i))) {
            b.neighbours.push_back(
                {h.id(i), b.neighbours[0].c_pk, b.neighbours[0].s_pk, {}, {}, {}});
            b.neighbours.back().c_pk[0] ^= 1;
            b.neighbours.back().s_pk[0] ^= 1;
            return;
          }
        }
      },
      [](KeysBroadcast& b, const Harness&) { b.neighbours.push_back(b.neighbours[0]); },
      // Two neighbours announced with the same key.
      [](KeysBroadcast& b, const Harness&) { b.neighbours[1].s_pk = b.neighbours[0].s_pk; },
      [](KeysBroadcast& b, const Harness&) { b.neighbours[0].c_pk.pop_back(); },
      // Too few neighbours to hand out t = 3 shares.
      [](KeysBroadcast& b, const Harness&) { b.neighbours.resize(1); },
  };
  for (Edit edit : edits) {
    Harness h(ClientHarary());
    h.Phase(true);
    edit(std::get<KeysBroadcast>(*h.inbox(0)), h);
    auto reply = h.client(0).Handle(*h.inbox(0));
    EXPECT_FALSE(reply.ok());
    EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
  }
}

TEST(ClientTest, RejectsItsOwnKeyReplayedAsANeighbours) {
  Harness h(ClientComplete());
  auto out = h.Start();
  const auto& own = std::get<AdvertiseKeys>(*out[0]);
  const std::vector<uint8_t> own_s_pk = own.s_pk;
  h.Send(out);
  h.Close();
  std::get<KeysBroadcast>(*h.inbox(0)).neighbours[0].s_pk = own_s_pk;
  EXPECT_THAT(h.client(0).Handle(*h.inbox(0)), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
}

TEST(ClientTest, RejectsTamperedOrReroutedCiphertexts) {
  for (int variant = 0; variant < 3; ++variant) {
    Harness h(ClientComplete());
    h.Phase(true);
    h.Phase();
    auto& req = std::get<MaskedInputRequest>(*h.inbox(0));
    if (variant == 0) req.shares[0].ciphertext[20] ^= 1;
    if (variant == 1) std::swap(req.shares[0].peer, req.shares[1].peer);  // rerouted
    if (variant == 2) req.shares[0].ciphertext.pop_back();
    auto reply = h.client(0).Handle(*h.inbox(0));
    EXPECT_FALSE(reply.ok());
    if (variant < 2) {
      EXPECT_EQ(reply.status().code(), absl::StatusCode::kDataLoss);
    }
    EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
  }
}

TEST(ClientTest, RejectsMisaddressedAndOutOfPhaseMessages) {
  using Edit = void (*)(ServerMessage&);
  const Edit edits[] = {
      [](ServerMessage& m) { std::get<KeysBroadcast>(m).header.aggregation_id ^= 1; },
      [](ServerMessage& m) { std::get<KeysBroadcast>(m).header.recipient ^= 1; },
      [](ServerMessage& m) { std::get<KeysBroadcast>(m).header.sender = 5; },
      [](ServerMessage& m) { std::get<KeysBroadcast>(m).header.phase = Phase::kMaskedInput; },
      [](ServerMessage& m) {  // a phase-2 message while waiting for phase 1
        MessageHeader h = std::get<KeysBroadcast>(m).header;
        h.phase = Phase::kMaskedInput;
        m = MaskedInputRequest{h, {}};
      },
  };
  for (Edit edit : edits) {
    Harness h(ClientComplete());
    h.Phase(true);
    edit(*h.inbox(2));
    EXPECT_FALSE(h.client(2).Handle(*h.inbox(2)).ok());
    EXPECT_EQ(h.client(2).state(), ClientState::kAborted);
    // The others are unaffected.
    EXPECT_EQ(h.client(3).state(), ClientState::kR1ShareKeys);
  }
}

TEST(ClientTest, AbortNoticeAbortsTheClient) {
  Harness h(ClientComplete());
  h.Phase(true);
  MessageHeader hdr = std::get<KeysBroadcast>(*h.inbox(0)).header;
  hdr.phase = Phase::kAbort;
  auto r = h.client(0).Handle(AbortNotice{hdr, "deadline"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
  EXPECT_EQ(h.client(0).abort_reason().code(), absl::StatusCode::kAborted);
}

TEST(ClientTest, InputValidationAndLifecycle) {
  Harness h(ClientComplete());
  ClientStateMachine& c = h.client(0);
  EXPECT_EQ(c.SetInput(std::vector<uint64_t>(7, 0)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.SetInput(std::vector<uint64_t>(8, 1 << 16)).code(),
            absl::StatusCode::kInvalidArgument);  // bits = 16
  std::vector<uint64_t> one_bad(8, 0xffff);       // the largest element is fine
  one_bad[5] = uint64_t{1} << 40;
  one_bad[6] = 1 << 16;
  const absl::Status bad = c.SetInput(one_bad);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()),
              ::testing::HasSubstr("input element 5 is not below 2^16"));
  std::vector<uint64_t> high_half(8, 0);
  high_half[7] = uint64_t{1} << 63;
  EXPECT_EQ(c.SetInput(high_half).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.SetInput(std::vector<uint64_t>(8, 0xffff)), IsOk());
  EXPECT_EQ(c.state(), ClientState::kR0AdvertiseKeys);
  ASSERT_THAT(c.Start(), IsOk());
  EXPECT_THAT(c.Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition));  // the caller's bug, not an abort
  EXPECT_EQ(c.state(), ClientState::kR1ShareKeys);
  EXPECT_THAT(ClientStateMachine::Create(h.config(), 31337, random::Csprng::FromSeed(1)),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(ClientTest, MissingInputAbortsAtMaskingTime) {
  SessionConfig config = ClientComplete();
  ServerStateMachine server = *ServerStateMachine::Create(config, random::Csprng::FromSeed(9));
  std::vector<ClientStateMachine> clients;
  for (DeviceId id : config.roster) {
    clients.push_back(*ClientStateMachine::Create(config, id, random::Csprng::FromSeed(id)));
    ASSERT_THAT(server.Receive(*clients.back().Start()), IsOk());
  }
  auto keys = *server.ClosePhase();
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_THAT(server.Receive(**clients[i].Handle(keys[i])), IsOk());
  }
  auto requests = *server.ClosePhase();
  auto r = clients[0].Handle(requests[0]);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(clients[0].state(), ClientState::kAborted);
}

}  // namespace
}  // namespace fedmf::secagg
