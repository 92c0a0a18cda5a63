// The client's unmasking phase on its own (common/secagg/internal/
// client_r3_unmasking.h): which share of which neighbour leaves, byte for
// byte, and every request it must refuse.
#include "common/secagg/internal/client_r3_unmasking.h"

#include <utility>
#include <variant>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/secagg/client_phase_fixture.h"

namespace fedmf::secagg::testing {
namespace r3_unmasking_test {

using ::fedmf::testing::StatusIs;
using internal::ClientContext;
using internal::HeldShares;
using ::testing::HasSubstr;

// Shares device kSelf holds of neighbours 1 and 3 (each owner's s_sk and b
// split 3 ways; kSelf is holder x = 2), and its own b-share.
struct Held {
  std::vector<HeldShares> held;
  crypto::ShamirShare own_b;
};
Held MakeHeld(random::Csprng& rng) {
  Held h;
  for (DeviceId owner : {1, 3}) {
    h.held.push_back({owner, SplitSecret(RandomSecret(rng), 2, 3, rng)[1],
                      SplitSecret(RandomSecret(rng), 2, 3, rng)[1]});
  }
  h.own_b = SplitSecret(RandomSecret(rng), 2, 3, rng)[1];
  return h;
}

UnmaskingRequest Request(std::vector<DeviceId> survivors, std::vector<DeviceId> dropped) {
  UnmaskingRequest r;
  r.header = {kAggregation, kServerId, kSelf, Phase::kUnmasking};
  r.survivors = std::move(survivors);
  r.dropped = std::move(dropped);
  return r;
}

TEST(ClientUnmaskingPhaseTest, RevealsBSharesOfSurvivorsAndSkSharesOfTheDroppedOnly) {
  ClientContext ctx = PhaseTestContext();
  const Held h = MakeHeld(ctx.rng);
  auto phase = internal::MakeUnmaskingPhase(h.held, h.own_b);
  EXPECT_EQ(phase->state(), ClientState::kR3Unmasking);
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t, phase->Handle(ctx, Request({1}, {3})));
  EXPECT_EQ(t.next, nullptr);  // the last phase
  ASSERT_TRUE(t.out.has_value());
  const auto* out = std::get_if<UnmaskingResponse>(&*t.out);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->header, (MessageHeader{kAggregation, kSelf, kServerId, Phase::kUnmasking}));
  ASSERT_EQ(out->b_shares.size(), 2u);
  EXPECT_EQ(out->b_shares[0].owner, kSelf);
  EXPECT_EQ(out->b_shares[0].share, crypto::SerializeShamirShare(h.own_b));
  EXPECT_EQ(out->b_shares[1].owner, 1u);
  EXPECT_EQ(out->b_shares[1].share, crypto::SerializeShamirShare(h.held[0].b_share));
  ASSERT_EQ(out->s_sk_shares.size(), 1u);
  EXPECT_EQ(out->s_sk_shares[0].owner, 3u);
  EXPECT_EQ(out->s_sk_shares[0].share, crypto::SerializeShamirShare(h.held[1].s_sk_share));
}

TEST(ClientUnmaskingPhaseTest, RefusesRequestsThatDoNotPartitionItsNeighbours) {
  ClientContext ctx = PhaseTestContext();
  const Held h = MakeHeld(ctx.rng);
  auto run = [&](const UnmaskingRequest& r) {
    return internal::MakeUnmaskingPhase(h.held, h.own_b)->Handle(ctx, r);
  };
  EXPECT_THAT(run(Request({1, 3}, {3})), StatusIs(absl::StatusCode::kPermissionDenied,
                                                  HasSubstr("as both survivor and dropped")));
  EXPECT_THAT(run(Request({1, kSelf}, {3})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("this device itself")));
  EXPECT_THAT(run(Request({1}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("covers 1 devices")));
  EXPECT_THAT(run(Request({1}, {4})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("but this device masked")));
  EXPECT_THAT(run(Request({1, 1}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate device")));
  EXPECT_THAT(run(Request({1, 3, 4}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lists more devices")));
  UnmaskingRequest with_signatures = Request({1}, {3});
  with_signatures.signatures.push_back({1, std::vector<uint8_t>(64, 0)});
  EXPECT_THAT(run(with_signatures),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unexpected signatures")));
  EXPECT_THAT(internal::MakeUnmaskingPhase(h.held, h.own_b)->Handle(ctx, MaskedInputRequest{}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("unexpected")));
}

// Signing clients: the request must match the survivor set this device
// signed and carry t - 1 valid neighbour signatures over it.
TEST(ClientUnmaskingPhaseTest, SigningClientChecksTheSurvivorSetItSigned) {
  ClientContext ctx = PhaseTestContext(/*threshold=*/2);
  const Held h = MakeHeld(ctx.rng);
  crypto::Ed25519PrivateKey key1 = *crypto::Ed25519PrivateKey::Generate(ctx.rng);
  crypto::Ed25519PrivateKey key3 = *crypto::Ed25519PrivateKey::Generate(ctx.rng);
  ctx.peer_signing_keys = {{1, key1.public_key()}, {3, key3.public_key()}};
  const std::vector<DeviceId> u3 = {1, kSelf};
  const std::vector<uint8_t> statement = SurvivorSetStatement(kAggregation, u3);
  auto run = [&](const UnmaskingRequest& r) {
    return internal::MakeUnmaskingPhase(h.held, h.own_b, u3)->Handle(ctx, r);
  };

  UnmaskingRequest good = Request({1}, {3});
  good.signatures.push_back({1, *key1.Sign(statement)});
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t, run(good));
  ASSERT_NE(std::get_if<UnmaskingResponse>(&*t.out), nullptr);

  EXPECT_THAT(run(Request({1}, {3})), StatusIs(absl::StatusCode::kFailedPrecondition,
                                               HasSubstr("only 1 consistency signatures")));
  UnmaskingRequest forged = Request({1}, {3});
  forged.signatures.push_back({1, *key3.Sign(statement)});  // not 1's key
  EXPECT_THAT(run(forged), StatusIs(absl::StatusCode::kPermissionDenied,
                                    HasSubstr("did not sign the survivor set")));
  UnmaskingRequest other_set = Request({1, 3}, {});
  other_set.signatures.push_back({1, *key1.Sign(statement)});
  EXPECT_THAT(run(other_set),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("(equivocation)")));
  UnmaskingRequest dropped_signer = Request({1}, {3});
  dropped_signer.signatures.push_back({3, *key3.Sign(statement)});
  EXPECT_THAT(run(dropped_signer),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not in the survivor set")));
  UnmaskingRequest stranger = Request({1}, {3});
  stranger.signatures.push_back({4, *key1.Sign(statement)});
  EXPECT_THAT(run(stranger),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a live neighbour")));
}

}  // namespace r3_unmasking_test
}  // namespace fedmf::secagg::testing
