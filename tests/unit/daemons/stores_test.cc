#include <stdlib.h>

#include <bit>
#include <cstdint>
#include <filesystem>

#include "common/mf/embeddings.h"
#include "common/store/sqlite.h"
#include "gtest/gtest.h"
#include "party/party_store.h"
#include "server/fmf/server_store.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf {
namespace {

std::string TempDir() {
  std::string t = (std::filesystem::temp_directory_path() / "fedmf-store-XXXXXX").string();
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  return t;
}

v1::JobSpec Spec(const std::string& id) {
  v1::JobSpec s;
  s.set_job_id(id);
  // One loop, not two literal calls: GCC 12 inlines those into a false
  // -Wrestrict on std::string.
  for (const std::string name : {"a", "b"}) s.add_roster(name);
  return s;
}

TEST(ServerStoreTest, RoundsCommitAtomicallyAndSurviveReopen) {
  const std::string dir = TempDir();
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
    EXPECT_FALSE((*store)->CommitRound("j1", r, mf::Matrix::Constant(3, 2, 0.9)).ok());
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
  std::filesystem::remove_all(dir);
}

TEST(ServerStoreTest, AReportAndThePartyRecordItUpdatesAreStoredTogether) {
  const std::string dir = TempDir();
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
    EXPECT_FALSE((*store)->SaveRoundReport("nope", 3, r, ghost).ok());
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
  std::filesystem::remove_all(dir);
}

TEST(PartyStoreTest, LedgerAndReleaseAreDurableAndUnique) {
  const std::string dir = TempDir();
  const std::string path = dir + "/p.db";
  const mf::Matrix up = mf::Matrix::Constant(4, 3, 0.125);
  {
    auto store = party::PartyStore::Open(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->CommitRelease({"j", 0, 0.01, 1.2, 10}, up), IsOk());
    ASSERT_THAT((*store)->CommitRelease({"j", 1, 0.01, 1.2, 10}, up * 2), IsOk());
    // The same (job, round) can never be charged twice; nothing changes.
    EXPECT_FALSE((*store)->CommitRelease({"j", 1, 0.01, 1.2, 10}, up * 3).ok());
    ASSERT_THAT((*store)->CommitCharge({"j", 100, 0.01, 1.2, 5}), IsOk());
  }
  auto store = party::PartyStore::Open(path);
  ASSERT_THAT(store, IsOk());
  auto ledger = (*store)->LoadLedger();
  ASSERT_THAT(ledger, IsOk());
  ASSERT_EQ(ledger->size(), 3u);
  EXPECT_EQ((*ledger)[1].round, 1);
  EXPECT_EQ((*ledger)[2].steps, 5);
  auto r1 = (*store)->Released("j", 1);
  ASSERT_TRUE(r1.ok() && r1->has_value());
  EXPECT_EQ(**r1, up * 2);
  // Only the latest release per job is kept for resending.
  EXPECT_FALSE((*store)->Released("j", 0)->has_value());
  std::filesystem::remove_all(dir);
}

// Released matrices are float32-exact (mf::RoundedToFloat32), so they are
// stored in half the bytes; anything else keeps its float64 bits.
TEST(StoreBlobTest, FloatExactMatricesTakeFourBytesAValueAndReadBackToTheBit) {
  const std::vector<double> exact = {0.125, -0.0, 0.0, 3.0, -0x1.8p-100, 1e30f};
  const std::string small = store::MatrixValuesToBlob(exact.data(), exact.size());
  EXPECT_EQ(small.size(), exact.size() * 4);
  auto back = store::BlobToMatrixValues(small, static_cast<int64_t>(exact.size()), 1);
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ(back->size(), exact.size());
  for (size_t i = 0; i < exact.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>((*back)[i]), std::bit_cast<uint64_t>(exact[i])) << i;
  }
  const std::vector<double> wide = {0.125, 0.1, -0.0};  // 0.1 is no float
  const std::string big = store::MatrixValuesToBlob(wide.data(), wide.size());
  EXPECT_EQ(big.size(), wide.size() * 8);
  back = store::BlobToMatrixValues(big, 1, static_cast<int64_t>(wide.size()));
  ASSERT_THAT(back, IsOk());
  for (size_t i = 0; i < wide.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>((*back)[i]), std::bit_cast<uint64_t>(wide[i])) << i;
  }
  // A blob of neither size is damage, named with the sizes.
  auto damaged = store::BlobToMatrixValues(big.substr(0, 20), static_cast<int64_t>(wide.size()), 1);
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(damaged.status().message().find("has 20 bytes (expected 12 or 24)"), std::string::npos)
      << damaged.status();
  // A damaged shape claiming 2^62 values is refused before anything is
  // allocated (n * 4 and n * 8 wrap to 0, which an empty blob must not match),
  // and so are negative and beyond-int32 shapes, named.
  EXPECT_EQ(store::BlobToMatrixValues("", int64_t{1} << 31, int64_t{1} << 31).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store::BlobToMatrixValues("", INT32_MAX, INT32_MAX).status().code(),
            absl::StatusCode::kDataLoss);
  auto negative = store::BlobToMatrixValues("", -1, 3);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(negative.status().message().find("shape -1 x 3"), std::string::npos)
      << negative.status();
}

TEST(PartyStoreTest, ReleasesReadBackExactlyInEitherWidth) {
  const std::string dir = TempDir();
  const std::string path = dir + "/p.db";
  const mf::Matrix exact = mf::RoundedToFloat32(mf::Matrix::Random(5, 4));
  const mf::Matrix wide = mf::Matrix::Constant(5, 4, 0.1);
  {
    auto store = party::PartyStore::Open(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->CommitRelease({"a", 0, 0.01, 1.2, 10}, exact), IsOk());
    ASSERT_THAT((*store)->CommitRelease({"b", 0, 0.01, 1.2, 10}, wide), IsOk());
  }
  auto store = party::PartyStore::Open(path);
  ASSERT_THAT(store, IsOk());
  auto a = (*store)->Released("a", 0);
  auto b = (*store)->Released("b", 0);
  ASSERT_TRUE(a.ok() && a->has_value());
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ(**a, exact);
  EXPECT_EQ(**b, wide);
  std::filesystem::remove_all(dir);
}

// An align_users job's shared users survive a restart, byte for byte (ids
// may hold commas, newlines, NULs), and a second alignment replaces the first.
TEST(PartyStoreTest, AlignmentsAreDurableAndReplaced) {
  const std::string dir = TempDir();
  const std::string path = dir + "/p.db";
  const std::vector<std::string> ids = {"a@x.org", "with,comma", std::string("nul\0in", 6), "",
                                        "line\nbreak"};
  {
    auto store = party::PartyStore::Open(path);
    ASSERT_THAT(store, IsOk());
    EXPECT_FALSE((*store)->Alignment("j")->has_value());
    ASSERT_THAT((*store)->SaveAlignment("j", {"old"}), IsOk());
    ASSERT_THAT((*store)->SaveAlignment("j", ids), IsOk());
    ASSERT_THAT((*store)->SaveAlignment("k", {}), IsOk());
  }
  auto store = party::PartyStore::Open(path);
  ASSERT_THAT(store, IsOk());
  auto j = (*store)->Alignment("j");
  ASSERT_THAT(j, IsOk());
  ASSERT_TRUE(j->has_value());
  EXPECT_EQ(**j, ids);
  auto k = (*store)->Alignment("k");
  ASSERT_TRUE(k.ok() && k->has_value());
  EXPECT_TRUE((*k)->empty());
  std::filesystem::remove_all(dir);
}

// A ledger written before charges recorded their unit is migrated on open:
// its rows read "unrecorded" (composed into both units), new rows keep theirs.
TEST(PartyStoreTest, OldLedgersAreMigrated) {
  const std::string dir = TempDir();
  const std::string path = dir + "/p.db";
  {
    auto db = store::Database::Open(path);
    ASSERT_THAT(db, IsOk());
    ASSERT_THAT((*db)->Exec("CREATE TABLE ledger (seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id "
                            "TEXT NOT NULL, round INTEGER NOT NULL, sample_rate REAL NOT NULL, "
                            "noise_multiplier REAL NOT NULL, steps INTEGER NOT NULL, UNIQUE "
                            "(job_id, round));"
                            "INSERT INTO ledger (job_id, round, sample_rate, noise_multiplier, "
                            "steps) VALUES ('old', 0, 0.01, 1.5, 10);"),
                IsOk());
  }
  {
    auto store = party::PartyStore::Open(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->CommitCharge({"new", 0, 0.01, 1.5, 10, dp::LedgerUnit::kUser}), IsOk());
  }
  auto store = party::PartyStore::Open(path);  // a second open migrates nothing again
  ASSERT_THAT(store, IsOk());
  auto ledger = (*store)->LoadLedger();
  ASSERT_THAT(ledger, IsOk());
  ASSERT_EQ(ledger->size(), 2u);
  EXPECT_EQ((*ledger)[0].unit, dp::LedgerUnit::kUnrecorded);
  EXPECT_EQ((*ledger)[1].unit, dp::LedgerUnit::kUser);
  std::filesystem::remove_all(dir);
}

// A job id is recorded with its spec's digest once; the same digest again is
// fine, another is refused; alignments are logged with what they showed.
TEST(PartyStoreTest, JobIdsAndAlignmentsAreRecordedDurably) {
  const std::string dir = TempDir();
  const std::string path = dir + "/p.db";
  {
    auto store = party::PartyStore::Open(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->RecordJob("j", "digest-1", 100), IsOk());
    ASSERT_THAT((*store)->RecordJob("j", "digest-1", 200), IsOk());
    auto seq = (*store)->BeginAlignment("j", 1000, "b,c", 40);
    ASSERT_THAT(seq, IsOk());
    ASSERT_THAT((*store)->EndAlignment(*seq, "b=50,c=60", 30, "aligned"), IsOk());
    ASSERT_THAT((*store)->BeginAlignment("k", 2000, "b", 40), IsOk());
  }
  auto store = party::PartyStore::Open(path);
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->RecordJob("j", "digest-2", 300).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*(*store)->JobSpecDigest("j"), std::optional<std::string>("digest-1"));
  EXPECT_FALSE((*store)->JobSpecDigest("other")->has_value());
  EXPECT_EQ(*(*store)->AlignmentsSince("b,c", 999), 1);
  EXPECT_EQ(*(*store)->AlignmentsSince("b,c", 1001), 0);
  EXPECT_EQ(*(*store)->AlignmentsSince("b", 0), 1);
  auto log = (*store)->Alignments();
  ASSERT_THAT(log, IsOk());
  ASSERT_EQ(log->size(), 2u);
  EXPECT_EQ((*log)[0].partner_sizes, "b=50,c=60");
  EXPECT_EQ((*log)[0].shared, 30);
  EXPECT_EQ((*log)[0].outcome, "aligned");
  EXPECT_EQ((*log)[1].outcome, "started");
  EXPECT_EQ((*log)[1].shared, -1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fedmf
