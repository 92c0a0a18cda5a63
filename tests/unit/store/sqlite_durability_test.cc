// store::Database's two durabilities, observed where they differ: how often
// SQLite asks the file system to sync (through a counting VFS over the
// default one), and what a crash of the process keeps.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "common/store/sqlite.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fedmf::store {
namespace {

using ::fedmf::testing::IsOk;
using Durability = Database::Durability;

// The default VFS with every file's xSync counted. Files keep the real
// VFS's layout; only their method table is swapped for a copy whose xSync
// counts and forwards (one copy per real table: the unix VFS has several).
std::atomic<int> g_syncs{0};
sqlite3_vfs* g_real_vfs = nullptr;
constexpr int kMaxMethodTables = 8;
struct MethodTables {
  const sqlite3_io_methods* real = nullptr;
  sqlite3_io_methods counting;
};
MethodTables g_tables[kMaxMethodTables];

int CountingSync(sqlite3_file* f, int flags) {
  ++g_syncs;
  for (const MethodTables& t : g_tables) {
    if (f->pMethods == &t.counting) return t.real->xSync(f, flags);
  }
  return SQLITE_INTERNAL;
}

int CountingOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out) {
  const int rc = g_real_vfs->xOpen(g_real_vfs, name, f, flags, out);
  if (rc != SQLITE_OK || f->pMethods == nullptr) return rc;
  for (MethodTables& t : g_tables) {
    if (t.real == nullptr) {
      t.real = f->pMethods;
      t.counting = *f->pMethods;
      t.counting.xSync = CountingSync;
    }
    if (t.real == f->pMethods) {
      f->pMethods = &t.counting;
      return rc;
    }
  }
  return SQLITE_INTERNAL;  // more method tables than slots
}

class CountingVfs {
 public:
  CountingVfs() {
    g_real_vfs = sqlite3_vfs_find(nullptr);
    vfs_ = *g_real_vfs;
    vfs_.zName = "fedmf-counting";
    vfs_.pNext = nullptr;
    vfs_.xOpen = CountingOpen;
    EXPECT_EQ(sqlite3_vfs_register(&vfs_, /*makeDflt=*/1), SQLITE_OK);
  }
  ~CountingVfs() {
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(g_real_vfs, /*makeDflt=*/1);
  }

 private:
  sqlite3_vfs vfs_;
};

int64_t SynchronousSetting(Database& db) {
  auto st = db.Prepare("PRAGMA synchronous;");
  EXPECT_THAT(st, IsOk());
  EXPECT_THAT(st->Step(), IsOk());
  return st->ColumnInt(0);
}

absl::Status InsertRow(Database& db, Durability durability, int64_t v) {
  Database::Transaction tx(&db, durability);
  if (!tx.begin_status().ok()) return tx.begin_status();
  auto st = db.Prepare("INSERT INTO t (v) VALUES (?)");
  if (!st.ok()) return st.status();
  st->Bind(1, v);
  if (absl::Status s = st->Run(); !s.ok()) return s;
  return tx.Commit();
}

constexpr int64_t kSyncFull = 2;  // PRAGMA synchronous values
constexpr int64_t kSyncNormal = 1;

TEST(DatabaseDurabilityTest, DeferredCommitsDoNotSyncAndTheNextSyncedCommitDoes) {
  CountingVfs counting;
  const ::fedmf::testing::ScopedTempDir scratch("fedmf-durability-");
  const std::string& dir = scratch.path();
  auto db = Database::Open(dir + "/d.db");
  ASSERT_THAT(db, IsOk());
  ASSERT_THAT((*db)->Exec("CREATE TABLE t (v INTEGER)"), IsOk());
  ASSERT_EQ(SynchronousSetting(**db), kSyncFull);

  g_syncs = 0;
  for (int64_t v = 0; v < 5; ++v)
    ASSERT_THAT(InsertRow(**db, Durability::kDeferredSync, v), IsOk());
  EXPECT_EQ(g_syncs.load(), 0);
  // The connection is back to FULL for whatever comes next.
  EXPECT_EQ(SynchronousSetting(**db), kSyncFull);

  ASSERT_THAT(InsertRow(**db, Durability::kSynced, 5), IsOk());
  EXPECT_GE(g_syncs.load(), 1);
  g_syncs = 0;
  ASSERT_THAT(InsertRow(**db, Durability::kSynced, 6), IsOk());
  EXPECT_GE(g_syncs.load(), 1);
  db->reset();
}

TEST(DatabaseDurabilityTest, ARolledBackDeferredTransactionRestoresFullSync) {
  const ::fedmf::testing::ScopedTempDir scratch("fedmf-durability-");
  const std::string& dir = scratch.path();
  auto db = Database::Open(dir + "/d.db");
  ASSERT_THAT(db, IsOk());
  ASSERT_THAT((*db)->Exec("CREATE TABLE t (v INTEGER)"), IsOk());
  {
    Database::Transaction tx(db->get(), Durability::kDeferredSync);
    ASSERT_THAT(tx.begin_status(), IsOk());
    EXPECT_EQ(SynchronousSetting(**db), kSyncNormal);
    ASSERT_THAT((*db)->Exec("INSERT INTO t (v) VALUES (1)"), IsOk());
  }  // not committed: rolled back
  EXPECT_EQ(SynchronousSetting(**db), kSyncFull);
  auto count = (*db)->Prepare("SELECT COUNT(*) FROM t");
  ASSERT_THAT(count, IsOk());
  ASSERT_THAT(count->Step(), IsOk());
  EXPECT_EQ(count->ColumnInt(0), 0);
  db->reset();
}

TEST(DatabaseDurabilityTest, ADeferredCommitSurvivesACrashOfTheProcess) {
  const ::fedmf::testing::ScopedTempDir scratch("fedmf-durability-");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/d.db";
  {
    auto db = Database::Open(path);
    ASSERT_THAT(db, IsOk());
    ASSERT_THAT((*db)->Exec("CREATE TABLE t (v INTEGER)"), IsOk());
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Commits without a sync and dies without closing the connection (no
    // checkpoint, no destructor): what a killed server leaves behind.
    auto db = Database::Open(path);
    if (!db.ok() || !InsertRow(**db, Durability::kDeferredSync, 42).ok()) _exit(1);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto db = Database::Open(path);
  ASSERT_THAT(db, IsOk());
  auto st = (*db)->Prepare("SELECT v FROM t");
  ASSERT_THAT(st, IsOk());
  auto row = st->Step();
  ASSERT_THAT(row, IsOk());
  ASSERT_TRUE(*row);
  EXPECT_EQ(st->ColumnInt(0), 42);
  db->reset();
}

}  // namespace
}  // namespace fedmf::store
