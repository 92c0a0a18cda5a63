// The party's SQLite store (party/party_store.h): the privacy ledger, releases,
// alignments and job ids survive a restart, old ledgers are migrated.
#include "party/party_store.h"

#include <string>

#include "common/mf/embeddings.h"
#include "common/store/sqlite.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf {
namespace {

TEST(PartyStoreTest, LedgerAndReleaseAreDurableAndUnique) {
  const fedmf::testing::ScopedTempDir tmp("fedmf-party-store-");
  const std::string& dir = tmp.path();
  const std::string path = dir + "/p.db";
  const mf::Matrix up = mf::Matrix::Constant(4, 3, 0.125);
  {
    auto store = party::PartyStore::Open(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->CommitRelease({"j", 0, 0.01, 1.2, 10}, up), IsOk());
    ASSERT_THAT((*store)->CommitRelease({"j", 1, 0.01, 1.2, 10}, up * 2), IsOk());
    // The same (job, round) can never be charged twice; nothing changes.
    EXPECT_THAT((*store)->CommitRelease({"j", 1, 0.01, 1.2, 10}, up * 3),
                StatusIs(absl::StatusCode::kInternal));
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
}

TEST(PartyStoreTest, ReleasesReadBackExactlyInEitherWidth) {
  const fedmf::testing::ScopedTempDir tmp("fedmf-party-store-");
  const std::string& dir = tmp.path();
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
}

// An align_users job's shared users survive a restart, byte for byte (ids
// may hold commas, newlines, NULs), and a second alignment replaces the first.
TEST(PartyStoreTest, AlignmentsAreDurableAndReplaced) {
  const fedmf::testing::ScopedTempDir tmp("fedmf-party-store-");
  const std::string& dir = tmp.path();
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
}

// A ledger written before charges recorded their unit is migrated on open:
// its rows read "unrecorded" (composed into both units), new rows keep theirs.
TEST(PartyStoreTest, OldLedgersAreMigrated) {
  const fedmf::testing::ScopedTempDir tmp("fedmf-party-store-");
  const std::string& dir = tmp.path();
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
}

// A job id is recorded with its spec's digest once; the same digest again is
// fine, another is refused; alignments are logged with what they showed.
TEST(PartyStoreTest, JobIdsAndAlignmentsAreRecordedDurably) {
  const fedmf::testing::ScopedTempDir tmp("fedmf-party-store-");
  const std::string& dir = tmp.path();
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
}

}  // namespace
}  // namespace fedmf
