// Acceptance 5: a party's own policy decides before its data is touched, and
// a party answers top-N recommendations after an HFL job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

// party-2 caps epsilon at 0.5 (< the job's 1.0) and its data file is
// deleted once it has started (a party validates its data at start): only a
// refusal made before loading data says "epsilon" rather than "cannot load
// the party's data".
cluster::ClusterOptions CappedThirdParty(const PlannedJob& plan, const std::string& data_file) {
  {
    std::ofstream out(data_file);
    out << "user,item,rating\n";
    for (int u = 0; u < 20; ++u) {
      for (int i = 0; i < 5; ++i)
        out << "vanishing-" << u << "," << i << "," << plan.dataset.range.max << "\n";
    }
  }
  cluster::ClusterOptions options = OptionsFor(plan);
  cluster::PartyOptions capped;
  capped.max_epsilon = 0.5;
  capped.data_spec = "csv:" + data_file;
  options.party_overrides[2] = capped;
  cluster::PartyOptions silent;  // fedmf-party's default: no test metrics sent
  silent.report_metrics = false;
  options.party_overrides[1] = silent;
  return options;
}

void ExpectEpsilonRefusal(const v1::JobStatus& st) {
  const v1::PartyStatus* p2 = FindParty(st, "party-2");
  ASSERT_NE(p2, nullptr);
  EXPECT_FALSE(p2->accepted());
  EXPECT_TRUE(absl::StrContains(p2->refusal(), "epsilon")) << p2->refusal();
  EXPECT_TRUE(absl::StrContains(p2->refusal(), "0.5")) << p2->refusal();
  EXPECT_FALSE(absl::StrContains(p2->refusal(), "data")) << p2->refusal();
  EXPECT_FALSE(absl::StrContains(p2->refusal(), "vanishing")) << p2->refusal();
  EXPECT_EQ(p2->epsilon_spent(), 0);
  EXPECT_EQ(p2->last_round(), -1);
}

class PolicyTest : public ClusterTest {
 protected:
  // Starts the cluster with CappedThirdParty's party-2, then takes its file away.
  void StartWithVanishingData(const PlannedJob& plan) {
    const std::string file =
        ::testing::TempDir() + "/fedmf_policy_" + std::to_string(::getpid()) + ".csv";
    ASSERT_NO_FATAL_FAILURE(StartCluster(CappedThirdParty(plan, file), {0, 1, 2}));
    ASSERT_TRUE(std::filesystem::remove(file)) << file;
  }
  // party-2 spent nothing and never opened its (missing) data.
  void ExpectUntouched() {
    auto ledger = cluster_->PartyLedger(2);
    ASSERT_THAT(ledger, IsOk());
    EXPECT_EQ(ledger->entries_size(), 0);
    EXPECT_EQ(ledger->epsilon_spent(), 0);
    EXPECT_EQ(ledger->max_epsilon(), 0.5);
    const std::string log = ReadFile(cluster_->work_dir() + "/logs/party-2.log");
    EXPECT_TRUE(absl::StrContains(log, "refusing job")) << log;
    EXPECT_FALSE(absl::StrContains(log, "cannot load")) << log;
    EXPECT_TRUE(cluster_->PartyRunning(2));
  }
};

TEST_F(PolicyTest, PartyOverItsEpsilonCapRefusesBeforeReadingDataOthersFinish) {
  auto plan = PlanJob(SyntheticHflFlags(10), "capped", 60, /*min_parties=*/1);
  ASSERT_THAT(plan, IsOk());
  ASSERT_NO_FATAL_FAILURE(StartWithVanishingData(*plan));
  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(3));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  ExpectEpsilonRefusal(*st);
  ASSERT_EQ(st->rounds_size(), 10);
  for (const v1::RoundRecord& r : st->rounds()) {
    EXPECT_EQ(r.contributors_size(), 2);
    EXPECT_TRUE(Contains(r.contributors(), "party-0"));
    EXPECT_TRUE(Contains(r.contributors(), "party-1"));
    EXPECT_FALSE(Contains(r.missing(), "party-2")) << "a refusing party is not 'missing'";
  }
  for (int k : {0, 1}) {
    const v1::PartyStatus& p = st->parties(k);
    EXPECT_TRUE(p.accepted());
    EXPECT_LE(p.epsilon_spent(), 1.0 + 1e-9);
  }
  // party-0 opted in to report_metrics; party-1 has fedmf-party's default
  // (off): it finished, but its noise-free test MSE never left it.
  EXPECT_GT(st->parties(0).test_count(), 0);
  EXPECT_GE(st->parties(0).test_mse(), 0);
  EXPECT_EQ(st->parties(1).test_count(), 0);
  EXPECT_EQ(st->parties(1).test_mse(), -1);
  EXPECT_GT(st->parties(1).epsilon_spent(), 0);
  ExpectUntouched();
}

TEST_F(PolicyTest, RefusalFailsAJobThatNeedsTheWholeRoster) {
  auto plan = PlanJob(SyntheticHflFlags(10), "all-or-nothing", 60, /*min_parties=*/3);
  ASSERT_THAT(plan, IsOk());
  ASSERT_NO_FATAL_FAILURE(StartWithVanishingData(*plan));
  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(3));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FAILED);
  ExpectEpsilonRefusal(*st);
  EXPECT_EQ(st->rounds_size(), 0);
  EXPECT_TRUE(absl::StrContains(st->error(), "2 of 3 parties accepted")) << st->error();
  EXPECT_TRUE(absl::StrContains(st->error(), "party-2")) << st->error();
  EXPECT_TRUE(absl::StrContains(st->error(), "epsilon")) << st->error();
  // The acceptors were told and charged nothing but the size release their
  // offer reply carried (docs/privacy.md section size-release): one step.
  for (int k : {0, 1}) {
    auto ledger = cluster_->PartyLedger(k);
    ASSERT_THAT(ledger, IsOk());
    ASSERT_EQ(ledger->entries_size(), 1);
    EXPECT_EQ(ledger->entries(0).steps(), 1);
    EXPECT_EQ(ledger->entries(0).sample_rate(), 1.0);
  }
  ExpectUntouched();
}

TEST_F(PolicyTest, RecommendAfterHflJobRanksUnratedItems) {
  auto plan = PlanJob(SyntheticHflFlags(10), "recommend", 60, /*min_parties=*/1);
  ASSERT_THAT(plan, IsOk());
  ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*plan), {0, 1, 2}));
  // Before any job: nothing to recommend from.
  auto early = cluster_->Recommend(0, plan->dataset.user_ids[0], 5);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition) << early.status();

  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(3));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();

  constexpr int kTop = 10;
  const data::PartyData& party = plan->federation.parties[0];
  ASSERT_GE(party.num_users(), 3);
  // Item ids each user rated in party-0's training and held-out splits
  // (local -> file ids): none is recommended by default.
  std::map<int32_t, std::set<std::string>> rated;
  for (const auto* split : {&party.train, &party.test}) {
    for (const data::Rating& r : *split) {
      rated[r.user].insert(plan->dataset.item_ids[party.global_items[r.item]]);
    }
  }
  std::set<std::string> all_items(plan->dataset.item_ids.begin(), plan->dataset.item_ids.end());
  for (int32_t local : {0, party.num_users() / 2, party.num_users() - 1}) {
    const std::string user = plan->dataset.user_ids[party.global_users[local]];
    SCOPED_TRACE("user " + user);
    auto recs = cluster_->Recommend(0, user, kTop);
    ASSERT_THAT(recs, IsOk());
    ASSERT_EQ(recs->items_size(), kTop);
    std::set<std::string> seen;
    for (int i = 0; i < recs->items_size(); ++i) {
      const v1::Recommendation& rec = recs->items(i);
      EXPECT_TRUE(all_items.count(rec.item())) << rec.item();
      EXPECT_TRUE(seen.insert(rec.item()).second) << "item " << rec.item() << " twice";
      EXPECT_FALSE(rated[local].count(rec.item())) << "recommended an item the user rated";
      EXPECT_TRUE(std::isfinite(rec.score()));
      EXPECT_GE(rec.score(), 0);
      EXPECT_LE(rec.score(), plan->config.rating_max + 1e-9);
      // The score is the predicted rating; the order is the party's ranking
      // rule's (common/mf/ranking.h: popularity counts too), so scores need
      // not descend. The rule's order is checked offline below (the same
      // list from the exported model) and in SavedModelTest.
    }
  }
  // Ranking every item: without the rated ones by default, all of them with
  // include_rated (so the rated ones were left out, not missing).
  {
    const int32_t local = 0;
    const std::string user = plan->dataset.user_ids[party.global_users[local]];
    const int all = static_cast<int>(all_items.size());
    ASSERT_GT(rated[local].size(), 0u);
    auto without = cluster_->Recommend(0, user, all);
    ASSERT_THAT(without, IsOk());
    EXPECT_EQ(without->items_size(), all - static_cast<int>(rated[local].size()));
    auto with = cluster_->Recommend(0, user, all, /*include_rated=*/true);
    ASSERT_THAT(with, IsOk());
    EXPECT_EQ(with->items_size(), all);
  }
  // A user of another party is not party-0's to answer for; unknown users fail.
  const data::PartyData& other = plan->federation.parties[1];
  auto foreign = cluster_->Recommend(0, plan->dataset.user_ids[other.global_users[0]], kTop);
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kNotFound) << foreign.status();
  auto unknown = cluster_->Recommend(0, "no-such-user", kTop);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound) << unknown.status();

  // The operator exports party-0's model (fedmf export-model) and ranks
  // offline (fedmf recommend --model): the same items and scores, no party.
  const std::string out = cluster_->work_dir() + "/exported";
  const std::string tls = " --cert-dir " + cluster_->cert_dir() + " --name operator";
  const std::string fedmf = BinDir() + "/fedmf";
  ASSERT_EQ(std::system((fedmf + " export-model --party 127.0.0.1:" +
                         std::to_string(cluster_->admin_port(0)) + " --party-name party-0 --out " +
                         out + tls + " > " + out + ".log 2>&1")
                            .c_str()),
            0)
      << ReadFile(out + ".log");
  EXPECT_TRUE(absl::StrContains(ReadFile(out + ".log"), "party-0's model"))
      << ReadFile(out + ".log");
  const std::string user = plan->dataset.user_ids[party.global_users[1]];
  auto live = cluster_->Recommend(0, user, kTop);
  ASSERT_THAT(live, IsOk());
  cluster_->StopAll();  // offline from here
  ASSERT_EQ(std::system((fedmf + " recommend --model " + out + " --user " + user +
                         " --top 10 --json > " + out + ".json 2> " + out + ".err")
                            .c_str()),
            0)
      << ReadFile(out + ".err");
  const std::string json = ReadFile(out + ".json");
  for (int i = 0; i < live->items_size(); ++i) {
    EXPECT_TRUE(absl::StrContains(json, "\"item\":\"" + live->items(i).item() + "\""))
        << live->items(i).item() << " missing from " << json;
  }
  const size_t first = json.find("\"item\":\"" + live->items(0).item() + "\"");
  const size_t last = json.find("\"item\":\"" + live->items(kTop - 1).item() + "\"");
  EXPECT_LT(first, last) << "not in the party's order: " << json;
}

}  // namespace
}  // namespace fedmf::it
