// The signing client's consistency check on its own (common/secagg/internal/
// client_consistency_check.h): the signature it sends is over exactly the
// survivor set announced, and a set it cannot vouch for is refused.
#include "common/secagg/internal/client_consistency_check.h"

#include <utility>
#include <variant>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/secagg/client_phase_fixture.h"

namespace fedmf::secagg::testing {
namespace consistency_check_test {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using internal::ClientContext;
using internal::HeldShares;
using ::testing::HasSubstr;

// Device kSelf, signing, holding shares of neighbours 1 and 3 (4 never shared).
ClientContext SigningContext(int min_survivors = 2) {
  ClientContext ctx = PhaseTestContext(/*threshold=*/2, min_survivors);
  ctx.signing = TestSigning(ctx.rng, "host-2");
  return ctx;
}
std::unique_ptr<internal::ClientPhase> Phase(ClientContext& ctx) {
  std::vector<HeldShares> held;
  for (DeviceId owner : {1, 3}) {
    held.push_back({owner, SplitSecret(RandomSecret(ctx.rng), 2, 3, ctx.rng)[1],
                    SplitSecret(RandomSecret(ctx.rng), 2, 3, ctx.rng)[1]});
  }
  return internal::MakeConsistencyCheckPhase(std::move(held),
                                             SplitSecret(RandomSecret(ctx.rng), 2, 3, ctx.rng)[1]);
}
ConsistencyCheckRequest Request(std::vector<DeviceId> survivors) {
  ConsistencyCheckRequest r;
  r.header = {kAggregation, kServerId, kSelf, Phase::kConsistencyCheck};
  r.survivors = std::move(survivors);
  return r;
}

TEST(ClientConsistencyCheckPhaseTest, SignsTheSortedSurvivorSetItWasSent) {
  ClientContext ctx = SigningContext();
  auto phase = Phase(ctx);
  EXPECT_EQ(phase->state(), ClientState::kConsistencyCheck);
  ASSERT_OK_AND_ASSIGN(internal::ClientTransition t, phase->Handle(ctx, Request({3, 1, kSelf})));
  ASSERT_NE(t.next, nullptr);
  EXPECT_EQ(t.next->state(), ClientState::kR3Unmasking);
  const auto* out = std::get_if<ConsistencySignature>(&*t.out);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->header, (MessageHeader{kAggregation, kSelf, kServerId, Phase::kConsistencyCheck}));
  const crypto::Ed25519PublicKey& vk = ctx.signing->key.public_key();
  EXPECT_THAT(crypto::Ed25519Verify(
                  vk, SurvivorSetStatement(kAggregation, std::vector<DeviceId>{1, kSelf, 3}),
                  out->signature),
              IsOk());
  // Over that set only: not another one, not another aggregation.
  EXPECT_THAT(
      crypto::Ed25519Verify(vk, SurvivorSetStatement(kAggregation, std::vector<DeviceId>{1, kSelf}),
                            out->signature),
      ::testing::Not(IsOk()));
  EXPECT_THAT(crypto::Ed25519Verify(
                  vk, SurvivorSetStatement(kAggregation + 1, std::vector<DeviceId>{1, kSelf, 3}),
                  out->signature),
              ::testing::Not(IsOk()));
}

TEST(ClientConsistencyCheckPhaseTest, RefusesSurvivorSetsItCannotVouchFor) {
  ClientContext ctx = SigningContext(/*min_survivors=*/3);
  EXPECT_THAT(
      Phase(ctx)->Handle(ctx, Request({1, 3})),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is not in the survivor set")));
  EXPECT_THAT(Phase(ctx)->Handle(ctx, Request({1, kSelf})),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("survivor set of 2 devices; min_survivors is 3")));
  EXPECT_THAT(Phase(ctx)->Handle(ctx, Request({1, kSelf, 9})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("9, not in the roster")));
  EXPECT_THAT(Phase(ctx)->Handle(ctx, Request({1, kSelf, 4})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("neighbour 4 as a survivor, but it never shared keys")));
  EXPECT_THAT(Phase(ctx)->Handle(ctx, Request({1, kSelf, 1})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate device")));
  EXPECT_THAT(Phase(ctx)->Handle(ctx, Request({1, kSelf, 3, 4, 5})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("larger than the roster")));
  EXPECT_THAT(Phase(ctx)->Handle(ctx, UnmaskingRequest{}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("unexpected")));
}

}  // namespace consistency_check_test
}  // namespace fedmf::secagg::testing
