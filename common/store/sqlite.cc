#include "common/store/sqlite.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::store {
namespace {

absl::Status SqliteError(sqlite3* db, const std::string& what) {
  return absl::InternalError(absl::StrCat("sqlite: ", what, ": ", sqlite3_errmsg(db)));
}

// One statement compiled; `flags` 0 or SQLITE_PREPARE_PERSISTENT (a cached
// one, kept for the connection's life).
absl::StatusOr<sqlite3_stmt*> Compile(sqlite3* db, const std::string& sql, unsigned flags) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size()), flags, &stmt, nullptr) !=
      SQLITE_OK) {
    return SqliteError(db, absl::StrCat("prepare '", sql.substr(0, 80), "'"));
  }
  return stmt;
}

}  // namespace

Statement::Statement(Statement&& o) noexcept
    : db_(o.db_),
      stmt_(o.stmt_),
      cache_(std::move(o.cache_)),
      cached_(o.cached_),
      bind_error_(std::move(o.bind_error_)) {
  o.stmt_ = nullptr;
  o.cached_ = nullptr;
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    Release();
    db_ = o.db_;
    stmt_ = o.stmt_;
    cache_ = std::move(o.cache_);
    cached_ = o.cached_;
    bind_error_ = std::move(o.bind_error_);
    o.stmt_ = nullptr;
    o.cached_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (stmt_ == nullptr) return;
  if (cached_ == nullptr) {
    sqlite3_finalize(stmt_);
  } else {
    // As finalizing did: ends the statement's read of the database (a
    // SELECT not stepped to its end) and drops the bound values (a blob's
    // copy) before the next use binds its own.
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    absl::MutexLock lock(&cache_->mu);
    if (cache_->closed) {
      sqlite3_finalize(stmt_);  // its Database is gone
      cached_->stmt = nullptr;
    }
    cached_->in_use = false;
  }
  stmt_ = nullptr;
  cached_ = nullptr;
  cache_.reset();
}

Statement& Statement::Bind(int index, int64_t v) {
  if (sqlite3_bind_int64(stmt_, index, v) != SQLITE_OK) bind_error_ = SqliteError(db_, "bind");
  return *this;
}

Statement& Statement::Bind(int index, double v) {
  if (sqlite3_bind_double(stmt_, index, v) != SQLITE_OK) bind_error_ = SqliteError(db_, "bind");
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    bind_error_ = SqliteError(db_, "bind");
  }
  return *this;
}

Statement& Statement::BindBlob(int index, const void* data, size_t size) {
  if (sqlite3_bind_blob64(stmt_, index, data, size, SQLITE_TRANSIENT) != SQLITE_OK) {
    bind_error_ = SqliteError(db_, "bind");
  }
  return *this;
}

Statement& Statement::BindNull(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) bind_error_ = SqliteError(db_, "bind");
  return *this;
}

absl::StatusOr<std::vector<std::string>> Statement::TextColumn(int col) {
  std::vector<std::string> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return out;
    out.push_back(ColumnText(col));
  }
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, "step");
}

absl::Status Statement::Run() {
  while (true) {
    ASSIGN_OR_RETURN(auto more, Step());
    if (!more) return absl::OkStatus();
  }
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

std::string Statement::ColumnText(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
}

std::string Statement::ColumnBlob(int col) const {
  const void* b = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return b == nullptr ? std::string() : std::string(static_cast<const char*>(b), n);
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw != nullptr ? sqlite3_errmsg(raw) : "out of memory";
    if (raw != nullptr) sqlite3_close(raw);
    return absl::UnavailableError(absl::StrCat("cannot open database '", path, "': ", msg,
                                               " (check the directory exists and is writable)"));
  }
  std::unique_ptr<Database> db(new Database(raw, path));
  sqlite3_busy_timeout(raw, 5000);
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL;", "PRAGMA synchronous=FULL;", "PRAGMA foreign_keys=ON;"}) {
    RETURN_IF_ERROR(db->Exec(pragma));
  }
  return db;
}

Database::~Database() {
  {
    absl::MutexLock lock(&cache_->mu);
    cache_->closed = true;
    for (auto& [sql, cached] : cache_->statements) {
      if (!cached->in_use) {
        sqlite3_finalize(cached->stmt);
        cached->stmt = nullptr;
      }
    }
  }
  // A statement still held (cached or not) keeps the connection open until
  // it is finalized.
  sqlite3_close_v2(db_);
}

absl::Status Database::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(absl::StrCat("sqlite: ", msg, " in: ", sql.substr(0, 80)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Statement> Database::Prepare(const std::string& sql) {
  {
    absl::MutexLock lock(&cache_->mu);
    auto it = cache_->statements.find(sql);
    if (it != cache_->statements.end()) {
      if (!it->second->in_use) {
        it->second->in_use = true;
        return Statement(db_, it->second->stmt, cache_, it->second.get());
      }
    } else if (cache_->statements.size() < kCachedStatements) {
      // Compiled under the lock: another thread asking for the same text
      // waits for this compilation instead of making its own.
      ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Compile(db_, sql, SQLITE_PREPARE_PERSISTENT));
      auto cached = std::make_unique<internal::CachedStatement>();
      cached->stmt = stmt;
      cached->in_use = true;
      internal::CachedStatement* slot = cached.get();
      cache_->statements.emplace(sql, std::move(cached));
      return Statement(db_, stmt, cache_, slot);
    }
  }
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Compile(db_, sql, 0));
  return Statement(db_, stmt, nullptr, nullptr);
}

absl::Status Database::Run(const std::string& sql) {
  ASSIGN_OR_RETURN(Statement st, Prepare(sql));
  if (absl::Status s = st.Run(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), " in: ", sql.substr(0, 80)));
  }
  return absl::OkStatus();
}

Database::Transaction::Transaction(Database* db, Durability durability)
    : db_(db), durability_(durability) {
  // In WAL mode synchronous=NORMAL commits without syncing the WAL; the next
  // FULL commit's sync (or a checkpoint's) covers the frames written before
  // it. The setting is the connection's, so it is set for this transaction
  // only (it cannot change inside one).
  if (durability_ == Durability::kDeferredSync) {
    begin_ = db_->Run("PRAGMA synchronous=NORMAL;");
    if (!begin_.ok()) return;
  }
  begin_ = db_->Run("BEGIN IMMEDIATE;");
  if (!begin_.ok()) RestoreSync();
}

Database::Transaction::~Transaction() {
  if (!done_ && begin_.ok()) {
    (void)db_->Run("ROLLBACK;");
    RestoreSync();
  }
}

void Database::Transaction::RestoreSync() {
  if (durability_ != Durability::kDeferredSync) return;
  // Setting a connection flag does no I/O and does not fail in practice; if
  // it did, later kSynced commits would silently not sync, which no caller
  // could notice: stop instead.
  if (absl::Status s = db_->Run("PRAGMA synchronous=FULL;"); !s.ok()) {
    std::fprintf(stderr, "fedmf: fatal: %s cannot return to synchronous=FULL: %s\n",
                 db_->path().c_str(), std::string(s.message()).c_str());
    std::abort();
  }
}

absl::Status Database::Transaction::Commit() {
  if (!begin_.ok()) return begin_;
  auto s = db_->Run("COMMIT;");
  if (s.ok()) {
    done_ = true;
    RestoreSync();
  }
  return s;
}

std::string MatrixValuesToBlob(const double* data, size_t n) {
  // Exact as a float: the round trip gives the same double (signed zeros
  // included; values are finite).
  const bool fits_float =
      std::all_of(data, data + n, [](double x) { return double{static_cast<float>(x)} == x; });
  if (!fits_float) return std::string(reinterpret_cast<const char*>(data), n * sizeof(double));
  std::string blob(n * sizeof(float), '\0');
  for (size_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(data[i]);
    std::memcpy(blob.data() + i * sizeof(float), &f, sizeof(float));
  }
  return blob;
}

absl::StatusOr<std::vector<double>> BlobToMatrixValues(const std::string& blob, int64_t rows,
                                                       int64_t cols) {
  if (rows < 0 || cols < 0 || rows > INT32_MAX || cols > INT32_MAX) {
    return absl::DataLossError(absl::StrCat("a stored matrix has shape ", rows, " x ", cols));
  }
  // Sizes checked before anything is allocated: n < 2^62, but n * 8 may
  // still wrap, so each comparison first bounds n by the blob.
  const auto n = static_cast<size_t>(rows * cols);
  const bool wide = n <= blob.size() / sizeof(double) && blob.size() == n * sizeof(double);
  const bool narrow = n <= blob.size() / sizeof(float) && blob.size() == n * sizeof(float);
  std::vector<double> out(wide || narrow ? n : 0);
  if (wide) {
    std::memcpy(out.data(), blob.data(), blob.size());
  } else if (narrow) {
    for (size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, blob.data() + i * sizeof(float), sizeof(float));
      out[i] = f;
    }
  } else {
    return absl::DataLossError(absl::StrCat("a stored matrix of ", n, " values has ", blob.size(),
                                            " bytes (expected ", n * sizeof(float), " or ",
                                            n * sizeof(double), ")"));
  }
  return out;
}

}  // namespace fedmf::store
