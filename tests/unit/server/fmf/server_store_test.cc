// The cross-silo server's SQLite store (server/fmf/server_store.h): a round
// commits atomically with the reports it carries and survives a reopen.
#include "server/fmf/server_store.h"

#include <string>

#include "common/mf/embeddings.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf {
namespace {

v1::JobSpec Spec(const std::string& id) {
  v1::JobSpec s;
  s.set_job_id(id);
  // One loop, not two literal calls: GCC 12 inlines those into a false
  // -Wrestrict on std::string.
  for (const std::string name : {"a", "b"}) s.add_roster(name);
  return s;
}

TEST(ServerStoreTest, RoundsCommitAtomicallyAndSurviveReopen) {
  const fedmf::testing::ScopedTempDir tmp("fedmf-server-store-");
  const std::string& dir = tmp.path();
  const std::string path = dir + "/s.db";
  {
    auto store = server::ServerStore::Open(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->CreateJob(Spec("j1")), IsOk());
    EXPECT_EQ((*store)->CreateJob(Spec("j1")).code(), absl::StatusCode::kAlreadyExists);
    server::StoredParty a;
    a.name = "a";
    a.replied = a.accepted = true;
    a.weight = 10;
    ASSERT_THAT((*store)->SaveParty("j1", a), IsOk());
    mf::Matrix m = mf::Matrix::Constant(3, 2, 0.5);
    ASSERT_THAT((*store)->StartRunning("j1", m), IsOk());
    v1::RoundRecord r;
    r.set_round(0);
    r.add_contributors("a");
    r.add_missing("b");
    r.set_seconds(1.5);
    ASSERT_THAT((*store)->CommitRound("j1", r, mf::Matrix::Constant(3, 2, 0.75)), IsOk());
    // A second commit of the same round is refused and changes nothing.
    EXPECT_THAT((*store)->CommitRound("j1", r, mf::Matrix::Constant(3, 2, 0.9)),
                StatusIs(absl::StatusCode::kInternal));
  }
  auto store = server::ServerStore::Open(path);
  ASSERT_THAT(store, IsOk());
  auto active = (*store)->ActiveJobId();
  ASSERT_TRUE(active.ok() && active->has_value());
  EXPECT_EQ(**active, "j1");
  auto job = (*store)->LoadJob("j1");
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ(job->state, v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job->round, 1);
  ASSERT_TRUE(job->shared.has_value());
  EXPECT_EQ(*job->shared, mf::Matrix::Constant(3, 2, 0.75));
  ASSERT_EQ(job->rounds.size(), 1u);
  EXPECT_EQ(job->rounds[0].contributors(0), "a");
  EXPECT_EQ(job->rounds[0].missing(0), "b");
  ASSERT_EQ(job->parties.size(), 2u);
  EXPECT_TRUE(job->parties[0].accepted);
  EXPECT_EQ(job->parties[0].weight, 10);
  EXPECT_FALSE(job->parties[1].replied);
  ASSERT_THAT((*store)->SetJobState("j1", v1::JOB_STATE_FINISHED), IsOk());
  EXPECT_FALSE((*store)->ActiveJobId()->has_value());
  EXPECT_EQ((*store)->LoadJob("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(ServerStoreTest, AReportAndThePartyRecordItUpdatesAreStoredTogether) {
  const fedmf::testing::ScopedTempDir tmp("fedmf-server-store-");
  const std::string& dir = tmp.path();
  const std::string path = dir + "/s.db";
  {
    auto store = server::ServerStore::Open(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->CreateJob(Spec("j1")), IsOk());
    server::StoredParty a;
    a.name = "a";
    a.replied = a.accepted = true;
    a.epsilon = 0.25;
    v1::PartyRoundReport r;
    r.set_party("a");
    r.set_job_epsilon(0.25);
    r.set_ledger_epsilon(0.5);
    r.set_test_mse(1.125);
    r.set_test_count(7);
    ASSERT_THAT((*store)->SaveRoundReport("j1", 3, r, a), IsOk());
    // The same round again replaces the report; the record follows it.
    r.set_job_epsilon(0.375);
    a.epsilon = 0.375;
    ASSERT_THAT((*store)->SaveRoundReport("j1", 3, r, a), IsOk());
    // A report for a job the store does not hold is refused, and its party
    // record is not written either.
    server::StoredParty ghost = a;
    ghost.epsilon = 9;
    EXPECT_THAT((*store)->SaveRoundReport("nope", 3, r, ghost),
                StatusIs(absl::StatusCode::kInternal));
  }
  auto store = server::ServerStore::Open(path);
  ASSERT_THAT(store, IsOk());
  auto job = (*store)->LoadJob("j1");
  ASSERT_THAT(job, IsOk());
  ASSERT_EQ(job->reports.count(3), 1u);
  ASSERT_EQ(job->reports.at(3).size(), 1u);
  EXPECT_EQ(job->reports.at(3)[0].job_epsilon(), 0.375);
  EXPECT_EQ(job->reports.at(3)[0].test_mse(), 1.125);
  ASSERT_EQ(job->parties.size(), 2u);
  EXPECT_EQ(job->parties[0].epsilon, 0.375);
  EXPECT_TRUE(job->parties[0].accepted);
  EXPECT_EQ((*store)->LoadJob("nope").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fedmf
