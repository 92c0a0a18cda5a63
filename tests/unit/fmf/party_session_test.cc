#include "common/fmf/party_session.h"

#include <limits>

#include "common/data/partition.h"
#include "common/data/synthetic.h"
#include "common/fmf/server_session.h"
#include "gtest/gtest.h"

namespace fedmf::fmf {
namespace {

data::Federation SmallHfl(int parties) {
  data::SyntheticOptions o;
  o.num_users = 60;
  o.num_items = 40;
  o.density = 0.2;
  auto d = data::GenerateSynthetic(o);
  EXPECT_TRUE(d.ok()) << d.status();
  auto f = data::PartitionHfl(*d, parties, {0.1, 3});
  EXPECT_TRUE(f.ok()) << f.status();
  return *f;
}

JobConfig HflJob(double epsilon) {
  JobConfig c;
  c.setting = Setting::kHfl;
  c.split = SplitKind::kHorizontal;
  c.rounds = 4;
  c.local_iters = 3;
  c.dim = 4;
  c.sample_rate = 0.2;
  c.epsilon = epsilon;
  c.pretrain_epochs = 2;
  c.finetune_epochs = 2;
  c.seed = 9;
  return c;
}

struct Fixture {
  data::Federation fed = SmallHfl(2);
  JobConfig config = HflJob(2.0);
  NoisePlan plan = *PlanNoise(config);
  dp::PrivacyLedger ledger{2.0 * (1 + 1e-9), 1e-5};
  std::unique_ptr<PartySession> party;
  mf::Matrix shared;

  Fixture() {
    party = *PartySession::Create(config, plan, fed.parties[0], fed.num_users, fed.num_items,
                                  &ledger, random::Csprng::FromSeed(5));
    random::Csprng rng = random::Csprng::FromSeed(6);
    shared = InitialSharedMatrix(config, fed.num_items, rng);
  }
};

TEST(PartySessionTest, PhasesAreEnforced) {
  Fixture f;
  EXPECT_EQ(f.party->RunRound(0, f.shared).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.party->Finish(f.shared).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(f.party->Pretrain(f.shared).ok());
  EXPECT_EQ(f.party->Pretrain(f.shared).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(f.party->RunRound(1, f.shared).ok());  // a missed round is skipped
  EXPECT_EQ(f.party->RunRound(1, f.shared).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.party->RunRound(0, f.shared).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.party->TrainAlone().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PartySessionTest, RejectsMalformedSharedMatrix) {
  Fixture f;
  EXPECT_EQ(f.party->Pretrain(mf::Matrix::Zero(3, 4)).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(f.party->Pretrain(f.shared).ok());
  mf::Matrix bad = f.shared;
  bad(0, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(f.party->RunRound(0, bad).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.party->next_round(), 0);
  EXPECT_TRUE(f.ledger.entries().empty());
}

TEST(PartySessionTest, EachRoundChargesTPrimeStepsBeforeRelease) {
  Fixture f;
  ASSERT_TRUE(f.party->Pretrain(f.shared).ok());
  mf::Matrix current = f.shared;
  for (int t = 0; t < f.config.rounds; ++t) {
    auto up = f.party->RunRound(t, current);
    ASSERT_TRUE(up.ok()) << up.status();
    ASSERT_EQ(f.ledger.entries().size(), static_cast<size_t>(t + 1));
    EXPECT_EQ(f.ledger.entries().back().round, t);
    EXPECT_EQ(f.ledger.entries().back().steps, f.config.local_iters);
    // Released matrices satisfy the clipping invariant.
    EXPECT_GE(up->minCoeff(), 0.0);
    EXPECT_LE(up->rowwise().squaredNorm().maxCoeff(), 5.0 + 1e-9);
    current = *up;
  }
  auto spent = f.ledger.SpentEpsilon();
  ASSERT_TRUE(spent.ok());
  EXPECT_NEAR(*spent, f.plan.epsilon, 1e-6);
  EXPECT_LE(*spent, 2.0);
  ASSERT_TRUE(f.party->Finish(current).ok());
  EXPECT_EQ(f.party->phase(), PartySession::Phase::kFinished);
}

TEST(PartySessionTest, OverBudgetRoundIsRefusedAndNothingChanges) {
  Fixture f;
  dp::PrivacyLedger tiny(0.05, 1e-5);  // far below what one round costs
  auto party = *PartySession::Create(f.config, f.plan, f.fed.parties[0], f.fed.num_users,
                                     f.fed.num_items, &tiny, random::Csprng::FromSeed(5));
  ASSERT_TRUE(party->Pretrain(f.shared).ok());
  mf::Matrix before_v = party->item_embeddings();
  auto up = party->RunRound(0, f.shared);
  EXPECT_EQ(up.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(tiny.entries().empty());
  EXPECT_EQ(party->next_round(), 0);
  EXPECT_EQ(party->item_embeddings(), before_v);
}

TEST(PartySessionTest, DeterministicUnderSeed) {
  Fixture a, b;
  ASSERT_TRUE(a.party->Pretrain(a.shared).ok());
  ASSERT_TRUE(b.party->Pretrain(b.shared).ok());
  EXPECT_EQ(*a.party->RunRound(0, a.shared), *b.party->RunRound(0, b.shared));
}

TEST(PartySessionTest, RecommendsUnratedItemsOfItsOwnUsers) {
  Fixture f;
  ASSERT_TRUE(f.party->Pretrain(f.shared).ok());
  const int32_t user = f.fed.parties[0].global_users[0];
  auto recs = f.party->Recommend(user, 5);
  ASSERT_TRUE(recs.ok()) << recs.status();
  ASSERT_EQ(recs->size(), 5u);
  for (size_t i = 1; i < recs->size(); ++i) EXPECT_GE((*recs)[i - 1].second, (*recs)[i].second);
  for (const auto& r : f.fed.parties[0].train) {
    if (r.user != 0) continue;
    for (const auto& [item, score] : *recs) EXPECT_NE(item, f.fed.parties[0].global_items[r.item]);
  }
  const int32_t other = f.fed.parties[1].global_users[0];
  EXPECT_EQ(f.party->Recommend(other, 5).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fedmf::fmf
