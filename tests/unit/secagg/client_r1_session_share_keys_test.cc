// Round 1 of a session round on its own (common/secagg/internal/
// client_r1_session_share_keys.h): fresh b and e shared under the session's
// channel keys, each live neighbour's round seed sent hidden under a pad only
// e opens, and a broadcast that does not fit the session refused.
#include "common/secagg/internal/client_r1_session_share_keys.h"

#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "common/secagg/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/secagg/client_phase_fixture.h"

namespace fedmf::secagg::testing {
namespace r1_session_share_keys_test {

using ::fedmf::testing::StatusIs;
using internal::ClientContext;
using ::testing::HasSubstr;

// Device kSelf in a session set up with neighbours 1 and 3 (4 never joined).
ClientContext SessionContext(int threshold = 2) {
  ClientContext ctx = PhaseTestContext(threshold);
  std::vector<ClientSession::Peer> peers;
  for (DeviceId id : {1, 3}) {
    peers.push_back({id, RandomSecret(ctx.rng), RandomSecret(ctx.rng), RandomSecret(ctx.rng)});
  }
  ctx.session = std::make_shared<ClientSession>();
  ctx.session->Establish(ctx.config, kSelf, ctx.neighbours, false, std::move(peers), {});
  return ctx;
}
KeysBroadcast CheckIns(std::vector<DeviceId> ids) {
  KeysBroadcast b;
  b.header = {kAggregation, kServerId, kSelf, Phase::kShareKeys};
  for (DeviceId id : ids) b.neighbours.push_back(NeighbourKeys{.device = id});
  return b;
}

TEST(ClientSessionShareKeysPhaseTest, SealsUnderSessionKeysAndHidesRoundSeedsUnderE) {
  ClientContext ctx = SessionContext();
  auto phase = internal::MakeSessionShareKeysPhase();
  EXPECT_EQ(phase->state(), ClientState::kR1ShareKeys);
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t, phase->Handle(ctx, CheckIns({3, 1})));
  ASSERT_NE(t.next, nullptr);
  EXPECT_EQ(t.next->state(), ClientState::kR2MaskedInput);
  const auto* out = std::get_if<ShareKeys>(&*t.out);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->header, (MessageHeader{kAggregation, kSelf, kServerId, Phase::kShareKeys}));
  ASSERT_EQ(out->shares.size(), 2u);
  ASSERT_EQ(out->mask_pads.size(), 2u);

  // Each peer opens its bundle with the session key it receives on; the
  // bundles' first shares are of e, any t = 2 of them give it back.
  std::vector<crypto::ShamirShare> e_shares;
  for (size_t k = 0; k < 2; ++k) {
    const ClientSession::Peer& peer = ctx.session->peers()[k];
    EXPECT_EQ(out->shares[k].peer, peer.id);
    ASSERT_OK_AND_ASSIGN(ShareBundle bundle,
                         OpenBundle(peer.send_key, peer.id, out->shares[k].ciphertext));
    EXPECT_EQ(bundle.owner, kSelf);
    EXPECT_EQ(bundle.holder, peer.id);
    EXPECT_EQ(bundle.s_sk_share.x, peer.id);  // holders {1, 2, 3}
    e_shares.push_back(bundle.s_sk_share);
  }
  ASSERT_OK_AND_ASSIGN(crypto::SecretBytes e, crypto::ShamirReconstruct(e_shares, 2));
  EXPECT_EQ(out->recovery_commitment, *CommitRecoveryKey(e.span(), kAggregation, kSelf));
  for (size_t k = 0; k < 2; ++k) {
    const ClientSession::Peer& peer = ctx.session->peers()[k];
    EXPECT_EQ(out->mask_pads[k].peer, peer.id);
    const crypto::SecretBytes seed =
        *DeriveRoundMaskSeed(peer.mask_key.span(), kAggregation, kSelf, peer.id);
    const crypto::SecretBytes pad = *DeriveRecoveryPad(e.span(), kAggregation, kSelf, peer.id);
    const crypto::SecretBytes hidden = XorSecret(seed.span(), pad.span());
    EXPECT_EQ(out->mask_pads[k].pad,
              std::vector<uint8_t>(hidden.span().begin(), hidden.span().end()));
    EXPECT_NE(out->mask_pads[k].pad, std::vector<uint8_t>(seed.span().begin(), seed.span().end()));
  }
}

TEST(ClientSessionShareKeysPhaseTest, RefusesBroadcastsThatDoNotFitTheSession) {
  ClientContext ctx = SessionContext();
  auto run = [&](const ServerMessage& m) {
    return internal::MakeSessionShareKeysPhase()->Handle(ctx, m);
  };
  KeysBroadcast with_keys = CheckIns({1, 3});
  with_keys.neighbours[1].c_pk.assign(32, 9);
  EXPECT_THAT(run(with_keys),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("carries keys for 3")));
  EXPECT_THAT(run(CheckIns({1, 4})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("includes 4, which did not complete the session's setup")));
  EXPECT_THAT(run(CheckIns({1, 1})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate device")));
  EXPECT_THAT(run(CheckIns({1, 3, 4})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("2 session neighbours")));
  EXPECT_THAT(run(UnmaskingRequest{}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("unexpected")));

  ClientContext strict = SessionContext(/*threshold=*/3);
  EXPECT_THAT(
      internal::MakeSessionShareKeysPhase()->Handle(strict, CheckIns({1})),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("only 1 live neighbours; need 2")));
}

}  // namespace r1_session_share_keys_test
}  // namespace fedmf::secagg::testing
