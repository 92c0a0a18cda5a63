// The client's first phase on its own (common/secagg/internal/
// client_r0_advertise_keys.cc, built by MakeClientInitialPhase): the keys it
// advertises, their signature against an active server, the key-less
// check-in of a session round, and that it answers no server message.
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "common/secagg/internal/client_phases.h"
#include "common/secagg/internal/client_r1_share_keys.h"
#include "common/secagg/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/secagg/client_phase_fixture.h"

namespace fedmf::secagg::testing {
namespace r0_advertise_keys_test {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using internal::ClientContext;
using ::testing::HasSubstr;

AdvertiseKeys Advertise(ClientContext& ctx, ClientState* next_state = nullptr) {
  absl::StatusOr<internal::ClientTransition> t = internal::MakeClientInitialPhase()->Start(ctx);
  EXPECT_THAT(t, IsOk());
  if (!t.ok() || !t->out.has_value()) return {};
  if (next_state != nullptr && t->next != nullptr) *next_state = t->next->state();
  return std::get<AdvertiseKeys>(*t->out);
}

TEST(ClientAdvertiseKeysPhaseTest, AdvertisesTwoFreshDistinctKeysUnderItsOwnHeader) {
  ClientContext ctx = PhaseTestContext();
  EXPECT_EQ(internal::MakeClientInitialPhase()->state(), ClientState::kR0AdvertiseKeys);
  ClientState next = ClientState::kAborted;
  const AdvertiseKeys out = Advertise(ctx, &next);
  EXPECT_EQ(next, ClientState::kR1ShareKeys);
  EXPECT_EQ(out.header, (MessageHeader{kAggregation, kSelf, kServerId, Phase::kAdvertiseKeys}));
  ASSERT_EQ(out.c_pk.size(), 32u);
  ASSERT_EQ(out.s_pk.size(), 32u);
  EXPECT_NE(out.c_pk, out.s_pk);
  EXPECT_THAT(crypto::ParseX25519PublicKey(out.c_pk), IsOk());
  EXPECT_THAT(crypto::ParseX25519PublicKey(out.s_pk), IsOk());
  EXPECT_TRUE(out.signing_key.empty() && out.credential.empty() && out.signature.empty());

  // The keys come from the context's generator: same seed, same bytes.
  ClientContext same = PhaseTestContext(2, 2, /*seed=*/7);
  ClientContext other = PhaseTestContext(2, 2, /*seed=*/8);
  EXPECT_EQ(Advertise(same).c_pk, out.c_pk);
  EXPECT_NE(Advertise(other).c_pk, out.c_pk);
}

TEST(ClientAdvertiseKeysPhaseTest, SigningClientSignsExactlyItsKeysForThisAggregation) {
  ClientContext ctx = PhaseTestContext();
  ctx.signing = TestSigning(ctx.rng, "host-2");
  const AdvertiseKeys out = Advertise(ctx);
  const crypto::Ed25519PublicKey& vk = ctx.signing->key.public_key();
  EXPECT_EQ(out.signing_key, std::vector<uint8_t>(vk.begin(), vk.end()));
  EXPECT_EQ(out.credential, ctx.signing->credential);
  EXPECT_THAT(
      crypto::Ed25519Verify(
          vk, AdvertisementStatement(kAggregation, kSelf, out.c_pk, out.s_pk, out.signing_key),
          out.signature),
      IsOk());
  // Swapping the two keys, or moving them to another device, breaks it.
  EXPECT_THAT(
      crypto::Ed25519Verify(
          vk, AdvertisementStatement(kAggregation, kSelf, out.s_pk, out.c_pk, out.signing_key),
          out.signature),
      ::testing::Not(IsOk()));
  EXPECT_THAT(crypto::Ed25519Verify(
                  vk, AdvertisementStatement(kAggregation, 3, out.c_pk, out.s_pk, out.signing_key),
                  out.signature),
              ::testing::Not(IsOk()));
}

TEST(ClientAdvertiseKeysPhaseTest, EstablishedSessionChecksInWithoutKeys) {
  ClientContext ctx = PhaseTestContext();
  ctx.session = std::make_shared<ClientSession>();
  ctx.session->Establish(ctx.config, kSelf, ctx.neighbours, false, {}, {});
  ClientState next = ClientState::kAborted;
  const AdvertiseKeys out = Advertise(ctx, &next);
  EXPECT_EQ(next, ClientState::kR1ShareKeys);
  EXPECT_EQ(out.header, (MessageHeader{kAggregation, kSelf, kServerId, Phase::kAdvertiseKeys}));
  EXPECT_TRUE(out.c_pk.empty() && out.s_pk.empty() && out.signing_key.empty() &&
              out.signature.empty());
}

TEST(ClientAdvertiseKeysPhaseTest, AnswersNoServerMessageAndOnlyTheFirstPhaseStarts) {
  ClientContext ctx = PhaseTestContext();
  for (const ServerMessage& m :
       {ServerMessage(KeysBroadcast{}), ServerMessage(MaskedInputRequest{}),
        ServerMessage(UnmaskingRequest{}), ServerMessage(ConsistencyCheckRequest{})}) {
    EXPECT_THAT(
        internal::MakeClientInitialPhase()->Handle(ctx, m),
        StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("in state R0AdvertiseKeys")));
  }
  auto later = internal::MakeShareKeysPhase(*crypto::X25519PrivateKey::Generate(ctx.rng),
                                            *crypto::X25519PrivateKey::Generate(ctx.rng));
  EXPECT_THAT(later->Start(ctx),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("Start() in state")));
}

}  // namespace r0_advertise_keys_test
}  // namespace fedmf::secagg::testing
