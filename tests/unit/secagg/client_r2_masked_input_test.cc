// The client's masking phase on its own (common/secagg/internal/
// client_r2_masked_input.h): the masked vector is exactly
// x + PRG(b) + Σ_{j<i} PRG(s_ij) − Σ_{j>i} PRG(s_ij) over the neighbours whose
// bundles arrived (seeds derived on the neighbours' side), and every bundle it
// cannot open or place is refused with its own code.
#include "common/secagg/internal/client_r2_masked_input.h"

#include <utility>
#include <variant>
#include <vector>

#include "common/crypto/aes_ctr_prg.h"
#include "common/secagg/mask.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/secagg/client_phase_fixture.h"

namespace fedmf::secagg::testing {
namespace r2_masked_input_test {

using ::fedmf::testing::StatusIs;
using internal::ClientContext;
using ::testing::HasSubstr;

// Device kSelf after round 1 with live neighbours 1 and 3: its s_sk and b,
// each neighbour's key pairs, the keys that open their bundles, and the
// shares each neighbour sends it.
struct Round2 {
  ClientContext ctx = PhaseTestContext();
  crypto::X25519PrivateKey s_sk = *crypto::X25519PrivateKey::Generate(ctx.rng);
  crypto::SecretBytes b = RandomSecret(ctx.rng);
  std::vector<TestNeighbour> neighbours;
  std::vector<crypto::SecretBytes> receive_keys;  // per neighbour
  std::vector<crypto::ShamirShare> s_sk_shares, b_shares;
  crypto::ShamirShare own_b_share = SplitSecret(b, 2, 3, ctx.rng)[1];

  Round2() {
    for (DeviceId id : {1, 3}) {
      neighbours.push_back(TestNeighbour::Make(id, ctx.rng));
      receive_keys.push_back(RandomSecret(ctx.rng));
      s_sk_shares.push_back(SplitSecret(RandomSecret(ctx.rng), 2, 3, ctx.rng)[1]);
      b_shares.push_back(SplitSecret(RandomSecret(ctx.rng), 2, 3, ctx.rng)[1]);
    }
  }
  std::unique_ptr<internal::ClientPhase> Phase() {
    std::vector<internal::Peer> peers;
    for (size_t k = 0; k < neighbours.size(); ++k) {
      peers.push_back({neighbours[k].id, neighbours[k].s_sk.public_key(), receive_keys[k],
                       crypto::SecretBytes()});
    }
    return internal::MakeMaskedInputPhase(
        *crypto::X25519PrivateKey::FromBytes(s_sk.ExportBytes()->span()), b, std::move(peers),
        own_b_share);
  }
  // Neighbour k's bundle to kSelf, as it would seal it.
  EncryptedShares Bundle(size_t k) {
    return {neighbours[k].id, SealBundle(receive_keys[k], neighbours[k].id, kSelf, s_sk_shares[k],
                                         b_shares[k], ctx.rng)};
  }
  MaskedInputRequest Request(std::vector<EncryptedShares> shares) {
    MaskedInputRequest r;
    r.header = {kAggregation, kServerId, kSelf, Phase::kMaskedInput};
    r.shares = std::move(shares);
    return r;
  }
  // What kSelf must send when exactly neighbours `live` (indices) shared keys.
  std::vector<uint64_t> Expected(const std::vector<size_t>& live) {
    std::vector<crypto::SecretBytes> seeds;
    for (size_t k : live) {
      seeds.push_back(*DeriveMaskSeed(neighbours[k].s_sk, s_sk.public_key(), kAggregation,
                                      neighbours[k].id, kSelf));
    }
    std::vector<MaskTerm> terms = {{b.span(), crypto::MaskSign::kAdd}};
    for (size_t i = 0; i < live.size(); ++i) {
      terms.push_back({seeds[i].span(), neighbours[live[i]].id < kSelf
                                            ? crypto::MaskSign::kAdd
                                            : crypto::MaskSign::kSubtract});
    }
    std::vector<uint64_t> y = {1, 2, 3, 4};
    EXPECT_TRUE(ApplyMasks(terms, ctx.config.bits, y).ok());
    return y;
  }
};

TEST(ClientMaskedInputPhaseTest, MasksWithExactlyTheNeighboursWhoseBundlesArrived) {
  Round2 r;
  auto phase = r.Phase();
  EXPECT_EQ(phase->state(), ClientState::kR2MaskedInput);
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t,
                       phase->Handle(r.ctx, r.Request({r.Bundle(1), r.Bundle(0)})));
  ASSERT_NE(t.next, nullptr);
  EXPECT_EQ(t.next->state(), ClientState::kR3Unmasking);  // not signing
  const auto* out = std::get_if<MaskedInput>(&*t.out);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->header, (MessageHeader{kAggregation, kSelf, kServerId, Phase::kMaskedInput}));
  EXPECT_EQ(out->masked, r.Expected({0, 1}));
  EXPECT_NE(out->masked, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_FALSE(r.ctx.input.has_value());  // the input is consumed

  // Neighbour 3 dropped before its bundle: masked with 1 alone.
  Round2 r1;
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t1,
                       r1.Phase()->Handle(r1.ctx, r1.Request({r1.Bundle(0)})));
  EXPECT_EQ(std::get<MaskedInput>(*t1.out).masked, r1.Expected({0}));
  EXPECT_NE(r1.Expected({0}), r1.Expected({0, 1}));
}

TEST(ClientMaskedInputPhaseTest, UnmaskingThenRevealsTheSharesItReceived) {
  Round2 r;
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t,
                       r.Phase()->Handle(r.ctx, r.Request({r.Bundle(0), r.Bundle(1)})));
  UnmaskingRequest u;
  u.survivors = {1};
  u.dropped = {3};
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t2, t.next->Handle(r.ctx, u));
  const auto& out = std::get<UnmaskingResponse>(*t2.out);
  ASSERT_EQ(out.b_shares.size(), 2u);
  EXPECT_EQ(out.b_shares[0].share, crypto::SerializeShamirShare(r.own_b_share));
  EXPECT_EQ(out.b_shares[1].share, crypto::SerializeShamirShare(r.b_shares[0]));
  ASSERT_EQ(out.s_sk_shares.size(), 1u);
  EXPECT_EQ(out.s_sk_shares[0].share, crypto::SerializeShamirShare(r.s_sk_shares[1]));
}

TEST(ClientMaskedInputPhaseTest, RefusesBundlesItCannotOpenOrPlace) {
  {
    Round2 r;
    r.ctx.input.reset();
    EXPECT_THAT(
        r.Phase()->Handle(r.ctx, r.Request({r.Bundle(0)})),
        StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("before the input was set")));
  }
  {
    Round2 r;
    EncryptedShares stranger = r.Bundle(0);
    stranger.peer = 4;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Request({stranger})),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("share bundle from 4, which is not a live neighbour")));
  }
  {
    Round2 r;
    EncryptedShares short_bundle = r.Bundle(0);
    short_bundle.ciphertext.pop_back();
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Request({short_bundle})),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected")));
  }
  {
    Round2 r;
    EncryptedShares tampered = r.Bundle(0);
    tampered.ciphertext[20] ^= 1;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Request({tampered})),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("does not decrypt")));
  }
  {
    Round2 r;  // neighbour 3's bundle relayed as if from 1
    EncryptedShares rerouted = r.Bundle(1);
    rerouted.peer = 1;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Request({rerouted})),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("does not decrypt")));
  }
  {
    Round2 r;  // sealed to kSelf, but naming another holder inside
    const crypto::SecretBytes plain =
        EncodeShareBundle(ShareBundle{1, 4, r.s_sk_shares[0], r.b_shares[0]});
    EncryptedShares misnamed = {
        1, *crypto::AesGcmSeal(r.receive_keys[0].span(), plain.span(),
                               ShareBundleAad(kAggregation, 1, kSelf), r.ctx.rng)};
    EXPECT_THAT(
        r.Phase()->Handle(r.ctx, r.Request({misnamed})),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("names owner 1 and holder 4")));
  }
  {
    Round2 r;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Request({r.Bundle(0), r.Bundle(0)})),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("two share bundles")));
  }
  {
    Round2 r;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Request({r.Bundle(0), r.Bundle(1), r.Bundle(0)})),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("3 share bundles from 2")));
  }
  {
    Round2 r;
    r.ctx.config.threshold = 3;  // one live holder + self cannot reach t = 3
    EXPECT_THAT(r.Phase()->Handle(r.ctx, r.Request({r.Bundle(0)})),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("only 1 neighbours shared keys; threshold is 3")));
  }
  {
    Round2 r;
    EXPECT_THAT(r.Phase()->Handle(r.ctx, KeysBroadcast{}),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("unexpected")));
  }
}

}  // namespace r2_masked_input_test
}  // namespace fedmf::secagg::testing
