// The server against misbehaving devices: each malformed, out-of-phase,
// duplicate or foreign message is rejected with a reason, drops (at most)
// its sender, and the others' sum still comes out exact.
#include <algorithm>
#include <functional>
#include <variant>

#include "common/secagg/server_state_machine.h"
#include "gtest/gtest.h"
#include "harness.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::secagg {
namespace {

using testing::Harness;
using testing::MakeConfig;
using Outbox = Harness::Outbox;

SessionConfig ServerComplete() { return MakeConfig(6, GraphKind::kComplete, 0, 3, 3, 12, 24, 3); }
SessionConfig ServerHarary() { return MakeConfig(16, GraphKind::kHarary, 6, 4, 8, 12, 24, 4); }

// Runs a whole aggregation; `tamper[p]` may edit or add to the outbox of
// phase p before it is delivered.
struct RunStatuses {
  std::vector<absl::Status> statuses[4];
};
RunStatuses RunWith(Harness& h, const std::function<void(size_t phase, Outbox&)>& tamper) {
  RunStatuses run;
  for (size_t p = 0; p < 4; ++p) {
    Outbox out = p == 0 ? h.Start() : h.Act();
    tamper(p, out);
    run.statuses[p] = h.Send(out);
    h.Close();
    if (h.server().state() == ServerState::kAborted) break;
  }
  return run;
}

void ExpectExactSum(Harness& h, const std::vector<DeviceId>& want_included) {
  ASSERT_EQ(h.server().state(), ServerState::kCompleted) << h.server().abort_reason();
  ASSERT_OK_AND_ASSIGN(auto result, h.server().Result());
  EXPECT_EQ(result.included, want_included);
  EXPECT_EQ(result.sum, h.ExpectedSum(result.included));
}

std::vector<DeviceId> AllBut(const Harness& h, std::vector<size_t> except) {
  std::vector<DeviceId> out;
  for (size_t i = 0; i < h.size(); ++i) {
    if (std::find(except.begin(), except.end(), i) == except.end()) out.push_back(h.id(i));
  }
  return out;
}

bool Dropped(const ServerStateMachine& s, DeviceId d) {
  return std::any_of(s.rejections().begin(), s.rejections().end(),
                     [&](const Rejection& r) { return r.device == d && r.device_dropped; });
}

TEST(ServerTest, HonestRunIsExact) {
  for (SessionConfig config : {ServerComplete(), ServerHarary()}) {
    Harness h(config);
    RunWith(h, [](size_t, Outbox&) {});
    ExpectExactSum(h, AllBut(h, {}));
    EXPECT_TRUE(h.server().rejections().empty());
  }
}

TEST(ServerTest, MalformedAdvertiseKeysDropOnlyTheSender) {
  using Edit = std::function<void(AdvertiseKeys&)>;
  const Edit edits[] = {
      [](AdvertiseKeys& m) { m.c_pk.pop_back(); },
      [](AdvertiseKeys& m) { m.s_pk = m.c_pk; },
      [](AdvertiseKeys& m) { std::fill(m.s_pk.begin(), m.s_pk.end(), 0); },  // low order
      [](AdvertiseKeys& m) { m.header.aggregation_id += 1; },                // foreign
      [](AdvertiseKeys& m) { m.header.recipient = 7; },
      [](AdvertiseKeys& m) { m.header.phase = Phase::kShareKeys; },
  };
  for (SessionConfig config : {ServerComplete(), ServerHarary()}) {
    for (const Edit& edit : edits) {
      Harness h(config);
      RunWith(h, [&](size_t p, Outbox& out) {
        if (p == 0) edit(std::get<AdvertiseKeys>(*out[1]));
      });
      EXPECT_TRUE(Dropped(h.server(), h.id(1)));
      ExpectExactSum(h, AllBut(h, {1}));
    }
  }
}

TEST(ServerTest, DuplicateAdvertiseDropsTheSender) {
  Harness h(ServerComplete());
  RunStatuses run = RunWith(h, [&](size_t p, Outbox& out) {
    if (p == 0) out.push_back(out[2]);
  });
  EXPECT_THAT(run.statuses[0][2], IsOk());
  EXPECT_EQ(run.statuses[0].back().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(Dropped(h.server(), h.id(2)));
  ExpectExactSum(h, AllBut(h, {2}));
}

TEST(ServerTest, RepeatedPublicKeyDropsEveryDeviceInvolved) {
  Harness h(ServerComplete());
  RunWith(h, [&](size_t p, Outbox& out) {
    if (p == 0) std::get<AdvertiseKeys>(*out[4]).s_pk = std::get<AdvertiseKeys>(*out[3]).s_pk;
  });
  EXPECT_TRUE(Dropped(h.server(), h.id(3)));
  EXPECT_TRUE(Dropped(h.server(), h.id(4)));
  ExpectExactSum(h, AllBut(h, {3, 4}));
}

TEST(ServerTest, UnknownSenderIsRejectedWithoutDroppingAnyone) {
  Harness h(ServerComplete());
  RunStatuses run = RunWith(h, [&](size_t p, Outbox& out) {
    if (p != 0) return;
    ClientMessage stranger = *out[0];
    std::get<AdvertiseKeys>(stranger).header.sender = 99;
    out.push_back(stranger);
  });
  EXPECT_EQ(run.statuses[0].back().code(), absl::StatusCode::kPermissionDenied);
  ASSERT_EQ(h.server().rejections().size(), 1u);
  EXPECT_FALSE(h.server().rejections()[0].device_dropped);
  ExpectExactSum(h, AllBut(h, {}));
}

TEST(ServerTest, MalformedShareKeysDropOnlyTheSender) {
  using Edit = std::function<void(ShareKeys&)>;
  const Edit edits[] = {
      [](ShareKeys& m) { m.shares.pop_back(); },                  // a neighbour left out
      [](ShareKeys& m) { m.shares.push_back(m.shares[0]); },      // twice for one
      [](ShareKeys& m) { m.shares[0].peer = 31337; },             // a stranger
      [](ShareKeys& m) { m.shares[1].ciphertext.push_back(0); },  // wrong size
      [](ShareKeys& m) { m.b_commitment.resize(5); },
      [](ShareKeys& m) { m.header.phase = Phase::kMaskedInput; },
  };
  for (SessionConfig config : {ServerComplete(), ServerHarary()}) {
    for (const Edit& edit : edits) {
      Harness h(config);
      RunWith(h, [&](size_t p, Outbox& out) {
        if (p == 1) edit(std::get<ShareKeys>(*out[0]));
      });
      EXPECT_TRUE(Dropped(h.server(), h.id(0)));
      ExpectExactSum(h, AllBut(h, {0}));
    }
  }
}

TEST(ServerTest, OutOfPhaseMessageDropsTheSender) {
  Harness h(ServerHarary());
  RunWith(h, [&](size_t p, Outbox& out) {
    // Device 5 answers the key broadcast with a masked input.
    if (p == 1) {
      MessageHeader hdr = std::get<ShareKeys>(*out[5]).header;
      hdr.phase = Phase::kMaskedInput;
      out[5] = MaskedInput{hdr, std::vector<uint64_t>(12, 0)};
    }
  });
  EXPECT_TRUE(Dropped(h.server(), h.id(5)));
  ExpectExactSum(h, AllBut(h, {5}));
}

TEST(ServerTest, BadMaskedInputDropsTheSenderWhoseMasksAreThenRemoved) {
  using Edit = std::function<void(MaskedInput&)>;
  const Edit edits[] = {
      [](MaskedInput& m) { m.masked.pop_back(); },
      [](MaskedInput& m) { m.masked[3] = uint64_t{1} << 24; },  // bits = 24
      [](MaskedInput& m) { m.header.aggregation_id = 0; },
  };
  for (SessionConfig config : {ServerComplete(), ServerHarary()}) {
    for (const Edit& edit : edits) {
      Harness h(config);
      RunWith(h, [&](size_t p, Outbox& out) {
        if (p == 2) edit(std::get<MaskedInput>(*out[2]));
      });
      EXPECT_TRUE(Dropped(h.server(), h.id(2)));
      // 2 is in U2 \ U3: its s_sk was reconstructed, its masks removed.
      ExpectExactSum(h, AllBut(h, {2}));
    }
  }
}

TEST(ServerTest, DuplicateMaskedInputIsRejectedButTheCommittedInputStays) {
  Harness h(ServerHarary());
  RunStatuses run = RunWith(h, [&](size_t p, Outbox& out) {
    if (p != 2) return;
    ClientMessage again = *out[7];
    std::get<MaskedInput>(again).masked[0] ^= 1;
    out.push_back(again);
  });
  EXPECT_EQ(run.statuses[2].back().code(), absl::StatusCode::kAlreadyExists);
  ASSERT_EQ(h.server().rejections().size(), 1u);
  EXPECT_FALSE(h.server().rejections()[0].device_dropped);
  ExpectExactSum(h, AllBut(h, {}));  // the first y_7 counts, the second does not
}

TEST(ServerTest, BadUnmaskingResponseIsDiscardedAndTheSumStaysExact) {
  using Edit = std::function<void(UnmaskingResponse&)>;
  const Edit edits[] = {
      [](UnmaskingResponse& m) { m.b_shares.pop_back(); },
      [](UnmaskingResponse& m) { m.b_shares.push_back(m.b_shares[0]); },
      [](UnmaskingResponse& m) { m.b_shares[1].share[0] ^= 1; },  // x no longer ours
      [](UnmaskingResponse& m) { m.b_shares[1].share.resize(10); },
      [](UnmaskingResponse& m) { m.s_sk_shares.push_back(m.b_shares[1]); },  // asks for both
      [](UnmaskingResponse& m) { m.b_shares[0].owner = 31337; },
  };
  for (const Edit& edit : edits) {
    Harness h(ServerComplete());
    RunWith(h, [&](size_t p, Outbox& out) {
      if (p == 3) edit(std::get<UnmaskingResponse>(*out[1]));
    });
    EXPECT_TRUE(Dropped(h.server(), h.id(1)));
    // 1 stays in U3 (its input is in the sum), only its response is ignored.
    ExpectExactSum(h, AllBut(h, {}));
    const auto u4 = h.server().Survivors(Phase::kUnmasking);
    EXPECT_EQ(std::count(u4.begin(), u4.end(), h.id(1)), 0);
  }
}

TEST(ServerTest, ALyingShareHolderCannotCorruptTheSum) {
  // With threads, the honest owners' seeds are recovered in parallel and the
  // lied-about one falls back to the serial, randomised recovery.
  for (int threads : {1, 2, 4}) {
    Harness h(ServerComplete());
    h.server().set_threads(threads);
    RunWith(h, [&](size_t p, Outbox& out) {
      if (p != 3) return;
      // Well-formed, right x, wrong value: only the commitment check catches it.
      auto& resp = std::get<UnmaskingResponse>(*out[0]);
      resp.b_shares[2].share[8] ^= 1;
    });
    ExpectExactSum(h, AllBut(h, {}));
    ASSERT_EQ(h.server().rejections().size(), 1u) << threads;
    EXPECT_EQ(h.server().rejections()[0].device, h.id(0));
    EXPECT_EQ(h.server().rejections()[0].reason.code(), absl::StatusCode::kDataLoss);
  }
}

TEST(ServerTest, DroppedDeviceCannotComeBack) {
  Harness h(ServerComplete());
  RunStatuses run = RunWith(h, [&](size_t p, Outbox& out) {
    if (p == 1) out[4].reset();  // 4 misses ShareKeys...
    if (p == 2) {                // ...and then tries to submit a masked input
      MessageHeader hdr{h.config().aggregation_id, h.id(4), kServerId, Phase::kMaskedInput};
      out[4] = MaskedInput{hdr, std::vector<uint64_t>(12, 0)};
    }
  });
  EXPECT_THAT(run.statuses[2][4], StatusIs(absl::StatusCode::kFailedPrecondition));
  ExpectExactSum(h, AllBut(h, {4}));
}

TEST(ServerTest, LifecycleErrors) {
  Harness h(ServerComplete());
  RunWith(h, [](size_t, Outbox&) {});
  ASSERT_EQ(h.server().state(), ServerState::kCompleted);
  EXPECT_EQ(h.server().ClosePhase().status().code(), absl::StatusCode::kFailedPrecondition);
  MessageHeader hdr{h.config().aggregation_id, h.id(0), kServerId, Phase::kAdvertiseKeys};
  EXPECT_THAT(h.server().Receive(AdvertiseKeys{hdr, {}, {}, {}, {}, {}}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(h.server().Result(), IsOk());
  SessionConfig bad = ServerComplete();
  bad.threshold = 1;
  EXPECT_THAT(ServerStateMachine::Create(bad, random::Csprng::FromSeed(1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ServerTest, AllExpectedReceivedTracksThePhase) {
  Harness h(ServerComplete());
  Outbox out = h.Start();
  EXPECT_FALSE(h.server().AllExpectedReceived());
  Outbox late(out.size());
  std::swap(late[0], out[0]);
  h.Send(out);
  EXPECT_FALSE(h.server().AllExpectedReceived());  // device 0 still owes its keys
  h.Send(late);
  EXPECT_TRUE(h.server().AllExpectedReceived());
}

}  // namespace
}  // namespace fedmf::secagg
