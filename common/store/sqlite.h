// A thin RAII layer over SQLite (WAL mode): one connection, prepared
// statements with typed binds, and transactions that roll back unless
// committed. Durable state of the server and of each party sits on it.
#ifndef FEDMF_COMMON_STORE_SQLITE_H_
#define FEDMF_COMMON_STORE_SQLITE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace fedmf::store {

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
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  absl::Status bind_error_;
};

class Database {
 public:
  // Opens (creating if needed) with WAL journaling, synchronous=FULL (a
  // committed round or ledger entry survives power loss) and foreign keys.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path);
  ~Database();

  absl::Status Exec(const std::string& sql);
  absl::StatusOr<Statement> Prepare(const std::string& sql);

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

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
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
