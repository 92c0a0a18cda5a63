// The durable writes a federation round makes, on a database in the system's
// temporary directory: the server's per-party round report (an upsert in a
// kDeferredSync transaction, no sync: what it costs is CPU) and a party's
// release (a 134 KB blob, 1682 x 20 float32 as in ML-100K HFL, with its
// ledger row, synced). Every round of `fedmf demo --setting hfl --parties 10`
// makes ten of each.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/store/sqlite.h"

namespace {

using fedmf::store::Database;

// A fresh database file, removed (with its WAL) at the end of the benchmark.
class TempDatabase {
 public:
  explicit TempDatabase(const char* schema) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "fedmf-store-bench-XXXXXX").string();
    const int fd = mkstemp(tmpl.data());
    if (fd < 0) std::abort();
    close(fd);
    path_ = tmpl;
    auto db = Database::Open(path_);
    if (!db.ok() || !(*db)->Exec(schema).ok()) std::abort();
    db_ = std::move(*db);
  }
  ~TempDatabase() {
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  Database* get() { return db_.get(); }

 private:
  std::string path_;
  std::unique_ptr<Database> db_;
};

void BM_DeferredRoundReport(benchmark::State& state) {
  TempDatabase db(
      "CREATE TABLE round_reports (job_id TEXT, round INTEGER, party TEXT, epsilon REAL, "
      "mse REAL, PRIMARY KEY (job_id, round, party));"
      "CREATE TABLE parties (name TEXT PRIMARY KEY, last_round INTEGER);");
  int64_t round = 0;
  for (auto _ : state) {
    ++round;
    Database::Transaction tx(db.get(), Database::Durability::kDeferredSync);
    if (!tx.begin_status().ok()) std::abort();
    auto st = db.get()->Prepare(
        "INSERT INTO round_reports (job_id, round, party, epsilon, mse) VALUES (?,?,?,?,?) "
        "ON CONFLICT(job_id, round, party) DO UPDATE SET epsilon=excluded.epsilon, "
        "mse=excluded.mse");
    if (!st.ok()) std::abort();
    st->Bind(1, "job").Bind(2, round).Bind(3, "party-1").Bind(4, 0.01 * round).Bind(5, 1.0);
    if (!st->Run().ok()) std::abort();
    auto party = db.get()->Prepare(
        "INSERT INTO parties (name, last_round) VALUES (?,?) ON CONFLICT(name) DO UPDATE SET "
        "last_round=excluded.last_round");
    if (!party.ok()) std::abort();
    party->Bind(1, "party-1").Bind(2, round);
    if (!party->Run().ok() || !tx.Commit().ok()) std::abort();
  }
}
BENCHMARK(BM_DeferredRoundReport);

void BM_SyncedRelease(benchmark::State& state) {
  TempDatabase db(
      "CREATE TABLE ledger (id INTEGER PRIMARY KEY, job_id TEXT, round INTEGER, epsilon REAL);"
      "CREATE TABLE releases (job_id TEXT, round INTEGER, data BLOB, PRIMARY KEY (job_id, "
      "round));");
  const std::string blob(1682 * 20 * sizeof(float), '\x5a');
  int64_t round = 0;
  for (auto _ : state) {
    ++round;
    Database::Transaction tx(db.get());
    if (!tx.begin_status().ok()) std::abort();
    auto entry = db.get()->Prepare("INSERT INTO ledger (job_id, round, epsilon) VALUES (?,?,?)");
    if (!entry.ok()) std::abort();
    entry->Bind(1, "job").Bind(2, round).Bind(3, 0.01);
    if (!entry->Run().ok()) std::abort();
    auto del = db.get()->Prepare("DELETE FROM releases WHERE job_id = ? AND round < ?");
    if (!del.ok()) std::abort();
    del->Bind(1, "job").Bind(2, round);
    if (!del->Run().ok()) std::abort();
    auto ins = db.get()->Prepare("INSERT INTO releases (job_id, round, data) VALUES (?,?,?)");
    if (!ins.ok()) std::abort();
    ins->Bind(1, "job").Bind(2, round).BindBlob(3, blob.data(), blob.size());
    if (!ins->Run().ok() || !tx.Commit().ok()) std::abort();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(blob.size()));
}
BENCHMARK(BM_SyncedRelease)->UseRealTime();

}  // namespace
