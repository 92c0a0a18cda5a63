// The client's key-sharing phase on its own (common/secagg/internal/
// client_r1_share_keys.h): each neighbour can open exactly its bundle, any t
// of the holders' shares give back s_sk and b, and a broadcast it must not
// trust is refused with its own code.
#include "common/secagg/internal/client_r1_share_keys.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/secagg/client_phase_fixture.h"

namespace fedmf::secagg::testing {
namespace r1_share_keys_test {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using internal::ClientContext;
using ::testing::HasSubstr;

// Device kSelf after advertising (c_sk, s_sk); neighbours 1, 3, 4 advertised too.
struct Round1 {
  ClientContext ctx;
  crypto::X25519PrivateKey c_sk = *crypto::X25519PrivateKey::Generate(ctx.rng);
  crypto::X25519PrivateKey s_sk = *crypto::X25519PrivateKey::Generate(ctx.rng);
  std::vector<TestNeighbour> neighbours;

  explicit Round1(int threshold = 2) : ctx(PhaseTestContext(threshold)) {
    for (DeviceId id : {1, 3, 4}) neighbours.push_back(TestNeighbour::Make(id, ctx.rng));
  }
  std::unique_ptr<internal::ClientPhase> Phase() const {
    return internal::MakeShareKeysPhase(
        *crypto::X25519PrivateKey::FromBytes(c_sk.ExportBytes()->span()),
        *crypto::X25519PrivateKey::FromBytes(s_sk.ExportBytes()->span()));
  }
  KeysBroadcast Broadcast(std::vector<NeighbourKeys> nks) const {
    KeysBroadcast b;
    b.header = {kAggregation, kServerId, kSelf, Phase::kShareKeys};
    b.neighbours = std::move(nks);
    return b;
  }
  KeysBroadcast All() const {
    return Broadcast({neighbours[0].Advertisement(), neighbours[1].Advertisement(),
                      neighbours[2].Advertisement()});
  }
  // What neighbour k opens kSelf's bundles with.
  crypto::SecretBytes ReceiveKeyOf(size_t k) const {
    return DeriveChannelKeys(neighbours[k].c_sk, c_sk.public_key(), kAggregation, neighbours[k].id,
                             kSelf)
        ->receive;
  }
};

TEST(ClientShareKeysPhaseTest, EachNeighbourOpensItsBundleAndAnyTSharesGiveBackSsk) {
  Round1 r;
  auto phase = r.Phase();
  EXPECT_EQ(phase->state(), ClientState::kR1ShareKeys);
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t, phase->Handle(r.ctx, r.All()));
  ASSERT_NE(t.next, nullptr);
  EXPECT_EQ(t.next->state(), ClientState::kR2MaskedInput);
  const auto* out = std::get_if<ShareKeys>(&*t.out);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->header, (MessageHeader{kAggregation, kSelf, kServerId, Phase::kShareKeys}));
  EXPECT_FALSE(out->b_commitment.empty());
  EXPECT_TRUE(out->mask_pads.empty() && out->recovery_commitment.empty());  // not a session
  ASSERT_EQ(out->shares.size(), 3u);

  std::vector<crypto::ShamirShare> s_sk_shares;
  for (size_t k = 0; k < 3; ++k) {
    const EncryptedShares& es = out->shares[k];
    EXPECT_EQ(es.peer, r.neighbours[k].id);
    EXPECT_EQ(es.ciphertext.size(), kSealedShareBundleBytes);
    ASSERT_OK_AND_ASSIGN(ShareBundle bundle, OpenBundle(r.ReceiveKeyOf(k), es.peer, es.ciphertext));
    EXPECT_EQ(bundle.owner, kSelf);
    EXPECT_EQ(bundle.holder, es.peer);
    // Holders {1, 2, 3, 4} in order get x = 1..4.
    EXPECT_EQ(bundle.s_sk_share.x, es.peer);
    s_sk_shares.push_back(bundle.s_sk_share);
    // Another neighbour's key does not open it.
    EXPECT_THAT(OpenBundle(r.ReceiveKeyOf((k + 1) % 3), es.peer, es.ciphertext),
                StatusIs(absl::StatusCode::kDataLoss));
  }
  // t = 2 of the neighbours' shares reconstruct the s_sk that was advertised.
  ASSERT_OK_AND_ASSIGN(crypto::SecretBytes s_sk,
                       crypto::ShamirReconstruct(std::vector{s_sk_shares[0], s_sk_shares[2]}, 2));
  EXPECT_EQ(s_sk, *r.s_sk.ExportBytes());
}

TEST(ClientShareKeysPhaseTest, SharesOnlyWithTheNeighboursTheBroadcastNames) {
  Round1 r;
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t,
                       r.Phase()->Handle(r.ctx, r.Broadcast({r.neighbours[2].Advertisement(),
                                                             r.neighbours[0].Advertisement()})));
  const auto& out = std::get<ShareKeys>(*t.out);
  ASSERT_EQ(out.shares.size(), 2u);
  EXPECT_EQ(out.shares[0].peer, 1u);
  EXPECT_EQ(out.shares[1].peer, 4u);
}

TEST(ClientShareKeysPhaseTest, RefusesBroadcastsItMustNotTrust) {
  {
    Round1 r;
    NeighbourKeys stranger = r.neighbours[0].Advertisement();
    stranger.device = 9;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Broadcast({stranger})),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("includes 9, which is not a neighbour")));
  }
  {
    Round1 r;
    NeighbourKeys short_key = r.neighbours[0].Advertisement();
    short_key.c_pk.pop_back();
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Broadcast({short_key, r.neighbours[1].Advertisement()})),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
  {
    Round1 r;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Broadcast({r.neighbours[0].Advertisement(),
                                                      r.neighbours[0].Advertisement()})),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a neighbour twice")));
  }
  {
    Round1 r;  // our own c_pk replayed as neighbour 1's
    NeighbourKeys replay = r.neighbours[0].Advertisement();
    replay.c_pk.assign(r.c_sk.public_key().begin(), r.c_sk.public_key().end());
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Broadcast({replay, r.neighbours[1].Advertisement()})),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("repeated public key")));
  }
  {
    Round1 r(/*threshold=*/3);
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Broadcast({r.neighbours[0].Advertisement()})),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("only 1 live neighbours; need 2")));
  }
  {
    Round1 r;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, MaskedInputRequest{}),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("unexpected")));
  }
}

// Against an active server the keys must be certified and signed.
TEST(ClientShareKeysPhaseTest, SigningClientRefusesUncertifiedOrUnsignedKeys) {
  Round1 r(/*threshold=*/3);  // 2t = 6 > 4 holders
  r.ctx.signing = TestSigning(r.ctx.rng, "host-2");
  std::vector<crypto::Ed25519PrivateKey> keys;
  std::vector<NeighbourKeys> signed_nks;
  for (size_t k = 0; k < 3; ++k) {
    keys.push_back(*crypto::Ed25519PrivateKey::Generate(r.ctx.rng));
    NeighbourKeys nk = r.neighbours[k].Advertisement();
    nk.signing_key.assign(keys[k].public_key().begin(), keys[k].public_key().end());
    const std::string host = "host-" + std::to_string(nk.device);
    nk.credential.assign(host.begin(), host.end());
    nk.signature = *keys[k].Sign(
        AdvertisementStatement(kAggregation, nk.device, nk.c_pk, nk.s_pk, nk.signing_key));
    signed_nks.push_back(std::move(nk));
  }
  {
    ClientContext& ctx = r.ctx;
    ASSERT_OK_AND_ASSIGN(internal::ClientTransition t,
                         r.Phase()->Handle(ctx, r.Broadcast(signed_nks)));
    EXPECT_EQ(std::get<ShareKeys>(*t.out).shares.size(), 3u);
    ASSERT_EQ(ctx.peer_signing_keys.size(), 3u);  // kept for the consistency check
    EXPECT_EQ(ctx.peer_signing_keys[1].first, 3u);
    EXPECT_EQ(ctx.peer_signing_keys[1].second, keys[1].public_key());
  }
  auto refuse = [&](size_t k, auto change) {
    r.ctx.peer_signing_keys.clear();
    std::vector<NeighbourKeys> nks = signed_nks;
    change(nks[k]);
    return r.Phase()->Handle(r.ctx, r.Broadcast(nks));
  };
  EXPECT_THAT(refuse(0, [](NeighbourKeys& nk) { nk.credential.clear(); }),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("is not certified")));
  EXPECT_THAT(
      refuse(1, [](NeighbourKeys& nk) { nk.signature[0] ^= 1; }),
      StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("not signed by its certified key")));
  EXPECT_THAT(
      refuse(2, [&](NeighbourKeys& nk) { nk.s_pk = signed_nks[0].s_pk; }),
      StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("not signed by its certified key")));
  EXPECT_THAT(refuse(2, [](NeighbourKeys& nk) { nk.signing_key.resize(5); }),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("bad signing key")));
  // All three neighbours on one other host: with the server it would hold
  // t = 3 shares of both of kSelf's secrets.
  r.ctx.peer_signing_keys.clear();
  std::vector<NeighbourKeys> one_host = signed_nks;
  for (NeighbourKeys& nk : one_host) nk.credential = {'h', '9'};
  EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Broadcast(one_host)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("run on host 'h9'")));
  // 2t <= holders: t = 2 with 4 holders is refused against an active server.
  r.ctx.peer_signing_keys.clear();
  r.ctx.config.threshold = 2;
  EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Broadcast(signed_nks)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("2t must exceed")));
}

}  // namespace r1_share_keys_test
}  // namespace fedmf::secagg::testing
