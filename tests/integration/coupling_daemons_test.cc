// Coupling learning over the daemons (issue #20 part 2): fedmf-server in the
// parameter server's role, fedmf-party processes as the data owners, mTLS
// on loopback. The daemons run exactly what the pure sessions compute on
// the same split; a private job charges every owner one step per round at the z its
// own accountant chose; an owner whose policy does not allow the setting
// refuses before reading data.
#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/coupling/flat_model.h"
#include "common/coupling/train.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "common/fmf/coupling_job.h"
#include "common/fmf/noise_plan.h"
#include "common/fmf/server_session.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

cli::JobFlags CouplingFlags(int epochs, double sample_rate, const std::string& epsilon) {
  cli::JobFlags flags;
  flags.setting = cli::SettingKind::kCoupling;
  flags.data = "synthetic:users=200,items=100,density=0.2,seed=3";
  flags.parties = 2;
  flags.seed = 1;
  flags.dim = 8;
  flags.lr = 0.5;
  flags.sample_rate = sample_rate;
  flags.coupling_epochs = epochs;
  flags.epsilon = epsilon;
  return flags;
}

class CouplingDaemonsTest : public ClusterTest {};

// The daemons run exactly the protocol: an emulation with the pure
// sessions (common/coupling/owner_session.h, common/fmf/server_session.h),
// the processes' seeds and float32 on the wire gives every party the test
// MSE it reported, to rounding.
TEST_F(CouplingDaemonsTest, DaemonsRunTheProtocolExactly) {
  auto plan = PlanJob(CouplingFlags(10, 0.05, "inf"), "coupling-exact", 120, 2);
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->config.rounds, 200);
  const data::Federation& fed = plan->federation;
  auto noise = fmf::PlanNoise(plan->config);
  ASSERT_THAT(noise, IsOk());
  auto terms = fmf::CouplingOwnerTerms(plan->config, *noise, fed.range);
  ASSERT_THAT(terms, IsOk());
  auto layout = coupling::FlatLayout::Create(fed.num_users, fed.num_items, plan->config.dim);
  ASSERT_THAT(layout, IsOk());
  // The server's stream (FmfJobOptions::seed -> "server") and each party's
  // (noise_seed -> "party-<data.index>" -> "job/<job id>"), as the cluster
  // configures them and fmf::AdmittedJob forks them.
  random::Csprng server_rng = random::Csprng::FromSeed(1).Fork("server");
  auto server = fmf::ServerSession::CreateCoupling(plan->config, *layout,
                                                   {{"party-0", 1}, {"party-1", 1}}, server_rng);
  ASSERT_THAT(server, IsOk());
  const mf::Matrix untrained = server->shared();
  dp::PrivacyLedger ledger(10, 1e-5);
  std::vector<std::unique_ptr<coupling::OwnerSession>> owners;
  for (int k = 0; k < 2; ++k) {
    const data::PartyData& p = fed.parties[k];
    auto train = data::ToGlobalIndices(p, p.train, fed.num_users, fed.num_items);
    auto test = data::ToGlobalIndices(p, p.test, fed.num_users, fed.num_items);
    ASSERT_THAT(train, IsOk());
    ASSERT_THAT(test, IsOk());
    auto owner =
        coupling::OwnerSession::Create(*terms, *layout, *train, *test, &ledger,
                                       random::Csprng::FromSeed(1)
                                           .Fork(absl::StrCat("party-", k))
                                           .Fork(absl::StrCat("job/", plan->config.job_id)));
    ASSERT_THAT(owner, IsOk());
    owners.push_back(std::move(*owner));
  }
  for (int32_t round = 0; round < 200; ++round) {
    for (int k = 0; k < 2; ++k) {
      auto release = owners[k]->RunStep(round, server->shared());
      ASSERT_THAT(release, IsOk());
      ASSERT_THAT(server->SubmitUpdate(k, round, release->cast<float>().cast<double>()), IsOk());
    }
    ASSERT_THAT(server->CloseRound(), IsOk());
  }

  ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*plan), {0, 1}));
  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(5));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  ASSERT_EQ(st->rounds_size(), 200);
  for (int k = 0; k < 2; ++k) {
    ASSERT_THAT(owners[k]->Finish(server->shared()), IsOk());
    const mf::ErrorMetrics emulated = owners[k]->EvaluateTest();
    ASSERT_THAT(owners[k]->Finish(untrained), IsOk());
    const double before = owners[k]->EvaluateTest().mse;
    const v1::PartyStatus* party = FindParty(*st, cluster::LocalCluster::PartyName(k));
    ASSERT_NE(party, nullptr);
    EXPECT_EQ(party->test_count(), emulated.count);
    EXPECT_NEAR(party->test_mse(), emulated.mse, 1e-9) << party->name();
    EXPECT_LT(party->test_mse(), before - 0.15) << party->name() << " untrained " << before;
  }
}

TEST_F(CouplingDaemonsTest, EveryRoundIsChargedAtTheOwnersOwnNoise) {
  auto plan = PlanJob(CouplingFlags(2, 0.1, "4"), "coupling-private", 120, 2);
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->config.rounds, 20);
  ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*plan), {0, 1}));
  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(5));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  auto z = dp::CalibrateNoiseMultiplier(0.1, 20, 1e-5, 4.0);
  ASSERT_THAT(z, IsOk());
  auto eps = dp::ComputeEpsilon(0.1, *z, 20, 1e-5);
  ASSERT_THAT(eps, IsOk());
  for (int k = 0; k < 2; ++k) {
    auto ledger = cluster_->PartyLedger(k);
    ASSERT_THAT(ledger, IsOk());
    std::vector<int> expected(20);
    for (int r = 0; r < 20; ++r) expected[r] = r;
    EXPECT_EQ(LedgerRounds(*ledger, *id), expected);
    for (const v1::LedgerEntry& e : ledger->entries()) {
      EXPECT_EQ(e.sample_rate(), 0.1);
      EXPECT_DOUBLE_EQ(e.noise_multiplier(), *z);
      EXPECT_EQ(e.steps(), 1);
    }
    EXPECT_NEAR(ledger->epsilon_spent(), *eps, 1e-9);
    EXPECT_LE(ledger->epsilon_spent(), 4.0 + 1e-9);
    const v1::PartyStatus* party = FindParty(*st, cluster::LocalCluster::PartyName(k));
    ASSERT_NE(party, nullptr);
    EXPECT_NEAR(party->job_epsilon(), *eps, 1e-9);
  }
}

TEST_F(CouplingDaemonsTest, AnOwnerWhosePolicyOmitsTheSettingRefuses) {
  auto plan = PlanJob(CouplingFlags(1, 0.1, "4"), "coupling-refused", 30, 2);
  ASSERT_THAT(plan, IsOk());
  cluster::ClusterOptions options = OptionsFor(*plan);
  cluster::PartyOptions strict;
  strict.allowed_settings = {"hfl", "vfl", "hfl-synsgd"};  // fedmf-party's default
  options.party_overrides[1] = strict;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options, {0, 1}));
  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(2));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(st->error(), "setting coupling is not allowed")) << st->error();
  auto ledger = cluster_->PartyLedger(1);
  ASSERT_THAT(ledger, IsOk());
  EXPECT_EQ(ledger->entries_size(), 0);
}

}  // namespace
}  // namespace fedmf::it
