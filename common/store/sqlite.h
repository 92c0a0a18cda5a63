// A thin RAII layer over SQLite (WAL mode): one connection, prepared
// statements with typed binds, and transactions that roll back unless
// committed. Durable state of the server and of each party sits on it.
//
// Compiled statements are kept per SQL text and handed out again: a round's
// writes (a party's release, the server's per-party reports) run the same few
// statements every round, and compiling them each time, with the
// transaction's BEGIN/COMMIT and PRAGMAs, was a quarter of the CPU of a
// server's round report (48 -> 35-38 us, tests/benchmarks/store_benchmark.cc).
#ifndef FEDMF_COMMON_STORE_SQLITE_H_
#define FEDMF_COMMON_STORE_SQLITE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

struct sqlite3;
struct sqlite3_stmt;

namespace fedmf::store {

namespace internal {
// One compiled statement a Database keeps; `in_use` while a Statement holds it.
struct CachedStatement {
  sqlite3_stmt* stmt = nullptr;
  bool in_use = false;
};
// A Database's compiled statements, shared with the Statements borrowing
// them so that one outliving its Database still ends cleanly: the Database's
// destructor finalizes the free ones and marks the cache closed, and a
// borrowed one is finalized when it comes back (the connection, closed with
// sqlite3_close_v2, goes when its last statement does).
struct StatementCache {
  absl::Mutex mu;
  bool closed ABSL_GUARDED_BY(mu) = false;
  // Entries are never removed while the cache is open, so a Statement's
  // pointer to one stays valid.
  absl::flat_hash_map<std::string, std::unique_ptr<CachedStatement>> statements ABSL_GUARDED_BY(mu);
};
}  // namespace internal

// A prepared statement, either borrowed from its Database's cache (reset and
// returned there when this is destroyed) or its own (finalized then).
class Statement {
 public:
  Statement(Statement&&) noexcept;
  Statement& operator=(Statement&&) noexcept;
  ~Statement();

  // 1-based parameter index, as in SQLite.
  Statement& Bind(int index, int64_t v);
  Statement& Bind(int index, double v);
  Statement& Bind(int index, std::string_view text);
  Statement& BindBlob(int index, const void* data, size_t size);
  Statement& BindNull(int index);

  // Advances: true while a row is available, false when done.
  absl::StatusOr<bool> Step();
  // Runs to completion (for INSERT/UPDATE/DDL).
  absl::Status Run();

  // Steps to the end, collecting column `col` of every row as text.
  absl::StatusOr<std::vector<std::string>> TextColumn(int col);

  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  std::string ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  friend class Database;
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::shared_ptr<internal::StatementCache> cache,
            internal::CachedStatement* cached)
      : db_(db), stmt_(stmt), cache_(std::move(cache)), cached_(cached) {}
  // Finalizes an own statement, or resets a borrowed one and returns it.
  void Release();

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::shared_ptr<internal::StatementCache> cache_;  // set when cached_ is
  internal::CachedStatement* cached_ = nullptr;      // an entry of cache_
  absl::Status bind_error_;
};

class Database {
 public:
  // Opens (creating if needed) with WAL journaling, synchronous=FULL (a
  // committed round or ledger entry survives power loss) and foreign keys.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path);
  ~Database();

  // Runs `sql`, which may hold several statements (a schema); each is
  // compiled afresh. For one statement run again and again, use Prepare.
  absl::Status Exec(const std::string& sql);
  // One statement. The first kCachedStatements distinct texts are compiled
  // once and reused; a text already held by a live Statement (a nested use)
  // or beyond the bound is compiled afresh and finalized after use.
  absl::StatusOr<Statement> Prepare(const std::string& sql);
  // Prepares and runs one statement that returns no rows (BEGIN, PRAGMA).
  absl::Status Run(const std::string& sql);

  // Bound on the cache: fedmf's SQL texts are literals (a few dozen), so
  // the bound only guards against a caller building texts with values in.
  static constexpr size_t kCachedStatements = 64;

  // When a committed transaction is on disk.
  enum class Durability {
    // Commit() returns once the WAL is synced: the transaction survives a
    // power loss. Every ledger entry and round takes this.
    kSynced,
    // Commit() returns once the transaction is in the WAL, unsynced: it
    // survives a crash of the process (the operating system holds the
    // write) and reaches the disk with the next synced commit or checkpoint
    // of this database; a power loss before then rolls it back. For records
    // a restart can do without or gets again (the server's per-party round
    // reports), not for anything a promise depends on.
    kDeferredSync,
  };

  // RAII transaction: rolls back in the destructor unless Commit() succeeded.
  class Transaction {
   public:
    explicit Transaction(Database* db, Durability durability = Durability::kSynced);
    ~Transaction();
    absl::Status Commit();
    const absl::Status& begin_status() const { return begin_; }

   private:
    // Back to synchronous=FULL after a kDeferredSync transaction ends.
    void RestoreSync();

    Database* db_;
    Durability durability_;
    absl::Status begin_;
    bool done_ = false;
  };

  const std::string& path() const { return path_; }
  // How many compiled statements the cache holds (at most kCachedStatements).
  size_t cached_statements() const {
    absl::MutexLock lock(&cache_->mu);
    return cache_->statements.size();
  }

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  const std::shared_ptr<internal::StatementCache> cache_ =
      std::make_shared<internal::StatementCache>();
};

// Matrices are stored as raw little-endian IEEE-754 values with their shape
// in columns of their own: as float32 when every value is exactly a float
// (what fedmf releases and shares is rounded to float32 before it leaves, so
// a round's release or shared matrix writes and syncs half the bytes), as
// float64 otherwise. The reader tells the two apart by the blob's size.
std::string MatrixValuesToBlob(const double* data, size_t n);
// The rows * cols values of a blob MatrixValuesToBlob wrote (either width),
// row-major. DataLoss naming what is wrong when the stored shape is negative
// or beyond int32 (a damaged row; checked before anything is sized by it), or
// the blob is neither 4 nor 8 bytes per value.
absl::StatusOr<std::vector<double>> BlobToMatrixValues(const std::string& blob, int64_t rows,
                                                       int64_t cols);

}  // namespace fedmf::store

#endif  // FEDMF_COMMON_STORE_SQLITE_H_
