#include "party/party_store.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::party {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  round INTEGER NOT NULL,
  sample_rate REAL NOT NULL,
  noise_multiplier REAL NOT NULL,
  steps INTEGER NOT NULL,
  UNIQUE (job_id, round));
CREATE TABLE IF NOT EXISTS releases (
  job_id TEXT NOT NULL,
  round INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  cols INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (job_id, round));
CREATE TABLE IF NOT EXISTS alignments (
  job_id TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  ids BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY,
  spec_sha256 BLOB NOT NULL,
  first_admitted_unix INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS alignment_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  started_unix INTEGER NOT NULL,
  partners TEXT NOT NULL,
  own_size INTEGER NOT NULL,
  partner_sizes TEXT NOT NULL DEFAULT '',
  shared INTEGER NOT NULL DEFAULT -1,
  outcome TEXT NOT NULL DEFAULT 'started');
)sql";

// Whether `table` has `column` (for migrations of databases made by older
// builds).
absl::StatusOr<bool> HasColumn(store::Database& db, const std::string& table,
                               const std::string& column) {
  ASSIGN_OR_RETURN(auto st, db.Prepare(absl::StrCat("PRAGMA table_info(", table, ")")));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return false;
    if (st.ColumnText(1) == column) return true;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PartyStore>> PartyStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(auto db, store::Database::Open(path));
  RETURN_IF_ERROR((db)->Exec(kSchema));
  // Migration: each charge's unit (granularity), absent in databases made
  // before it was recorded. Their rows read as "unrecorded", which the
  // ledger composes into both units (dp::LedgerUnit).
  ASSIGN_OR_RETURN(const bool has_unit, HasColumn(*db, "ledger", "unit"));
  if (!has_unit) {
    RETURN_IF_ERROR(
        db->Exec("ALTER TABLE ledger ADD COLUMN unit TEXT NOT NULL DEFAULT 'unrecorded'"));
  }
  return std::unique_ptr<PartyStore>(new PartyStore(std::move(db)));
}

absl::StatusOr<std::vector<dp::LedgerEntry>> PartyStore::LoadLedger() const {
  auto st = db_->Prepare(
      "SELECT job_id, round, sample_rate, noise_multiplier, steps, unit FROM ledger ORDER BY seq");
  if (!st.ok()) return st.status();
  std::vector<dp::LedgerEntry> out;
  while (true) {
    ASSIGN_OR_RETURN(auto row, st->Step());
    if (!row) break;
    out.push_back({st->ColumnText(0), st->ColumnInt(1), st->ColumnDouble(2), st->ColumnDouble(3),
                   st->ColumnInt(4), dp::LedgerUnitFromName(st->ColumnText(5))});
  }
  return out;
}

absl::Status PartyStore::InsertEntry(const dp::LedgerEntry& e) {
  auto st = db_->Prepare(
      "INSERT INTO ledger (job_id, round, sample_rate, noise_multiplier, steps, unit) "
      "VALUES (?,?,?,?,?,?)");
  if (!st.ok()) return st.status();
  st->Bind(1, e.job_id)
      .Bind(2, e.round)
      .Bind(3, e.sample_rate)
      .Bind(4, e.noise_multiplier)
      .Bind(5, e.steps)
      .Bind(6, std::string_view(dp::LedgerUnitName(e.unit)));
  return st->Run();
}

absl::Status PartyStore::CommitRelease(const dp::LedgerEntry& entry, const mf::Matrix& update) {
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  RETURN_IF_ERROR(InsertEntry(entry));
  // Only the latest release of a job is ever resent; keep the table small.
  // Rounds only grow, and the size release (round T + 1, made first) sits
  // above every Stage-2 round, so it is kept for a restart to reuse.
  {
    ASSIGN_OR_RETURN(auto del, db_->Prepare("DELETE FROM releases WHERE job_id = ? AND round < ?"));
    del.Bind(1, entry.job_id).Bind(2, entry.round);
    RETURN_IF_ERROR(del.Run());
  }
  auto st =
      db_->Prepare("INSERT INTO releases (job_id, round, rows, cols, data) VALUES (?,?,?,?,?)");
  if (!st.ok()) return st.status();
  const std::string blob =
      store::MatrixValuesToBlob(update.data(), static_cast<size_t>(update.size()));
  st->Bind(1, entry.job_id)
      .Bind(2, entry.round)
      .Bind(3, static_cast<int64_t>(update.rows()))
      .Bind(4, static_cast<int64_t>(update.cols()))
      .BindBlob(5, blob.data(), blob.size());
  RETURN_IF_ERROR(st->Run());
  return tx.Commit();
}

absl::Status PartyStore::CommitCharge(const dp::LedgerEntry& entry) {
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  RETURN_IF_ERROR(InsertEntry(entry));
  return tx.Commit();
}

absl::StatusOr<std::optional<mf::Matrix>> PartyStore::Released(const std::string& job_id,
                                                               int32_t round) const {
  ASSIGN_OR_RETURN(
      auto st,
      db_->Prepare("SELECT rows, cols, data FROM releases WHERE job_id = ? AND round = ?"));
  st.Bind(1, job_id).Bind(2, int64_t{round});
  ASSIGN_OR_RETURN(auto row, st.Step());
  if (!row) return std::optional<mf::Matrix>();
  const int64_t rows = st.ColumnInt(0), cols = st.ColumnInt(1);
  ASSIGN_OR_RETURN(auto values, store::BlobToMatrixValues(st.ColumnBlob(2), rows, cols));
  return std::optional<mf::Matrix>(Eigen::Map<mf::Matrix>(values.data(), rows, cols));
}

absl::Status PartyStore::SaveAlignment(const std::string& job_id,
                                       const std::vector<std::string>& ids) {
  // Length-prefixed, so an id may hold any byte.
  std::string blob;
  for (const std::string& id : ids) {
    const uint32_t n = static_cast<uint32_t>(id.size());
    blob.append(reinterpret_cast<const char*>(&n), sizeof(n));
    blob.append(id);
  }
  ASSIGN_OR_RETURN(
      auto st,
      db_->Prepare("INSERT OR REPLACE INTO alignments (job_id, count, ids) VALUES (?,?,?)"));
  st.Bind(1, job_id)
      .Bind(2, static_cast<int64_t>(ids.size()))
      .BindBlob(3, blob.data(), blob.size());
  return st.Run();
}

absl::StatusOr<std::optional<std::vector<std::string>>> PartyStore::Alignment(
    const std::string& job_id) const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT count, ids FROM alignments WHERE job_id = ?"));
  st.Bind(1, job_id);
  ASSIGN_OR_RETURN(auto row, st.Step());
  if (!row) return std::optional<std::vector<std::string>>();
  const int64_t count = st.ColumnInt(0);
  const std::string blob = st.ColumnBlob(1);
  std::vector<std::string> ids;
  size_t at = 0;
  while (at < blob.size()) {
    uint32_t n = 0;
    if (blob.size() - at < sizeof(n)) break;
    std::memcpy(&n, blob.data() + at, sizeof(n));
    at += sizeof(n);
    if (blob.size() - at < n) break;
    ids.emplace_back(blob.data() + at, n);
    at += n;
  }
  if (at != blob.size() || static_cast<int64_t>(ids.size()) != count) {
    return absl::DataLossError(absl::StrCat("the stored alignment of job '", job_id,
                                            "' is damaged (", ids.size(), " of ", count, " ids)"));
  }
  return std::optional<std::vector<std::string>>(std::move(ids));
}

absl::StatusOr<std::optional<std::string>> PartyStore::JobSpecDigest(
    const std::string& job_id) const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT spec_sha256 FROM jobs WHERE job_id = ?"));
  st.Bind(1, job_id);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(st.ColumnBlob(0));
}

absl::Status PartyStore::RecordJob(const std::string& job_id, const std::string& digest,
                                   int64_t unix_seconds) {
  ASSIGN_OR_RETURN(std::optional<std::string> known, JobSpecDigest(job_id));
  if (known.has_value()) {
    if (*known == digest) return absl::OkStatus();
    return absl::AlreadyExistsError(
        absl::StrCat("job id '", job_id, "' names another job this party was admitted to"));
  }
  ASSIGN_OR_RETURN(auto st, db_->Prepare("INSERT INTO jobs (job_id, spec_sha256, "
                                         "first_admitted_unix) VALUES (?,?,?)"));
  st.Bind(1, job_id).BindBlob(2, digest.data(), digest.size()).Bind(3, unix_seconds);
  return st.Run();
}

absl::StatusOr<int64_t> PartyStore::BeginAlignment(const std::string& job_id, int64_t started_unix,
                                                   const std::string& partners, int64_t own_size) {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("INSERT INTO alignment_log (job_id, started_unix, "
                                         "partners, own_size) VALUES (?,?,?,?)"));
  st.Bind(1, job_id).Bind(2, started_unix).Bind(3, partners).Bind(4, own_size);
  RETURN_IF_ERROR(st.Run());
  ASSIGN_OR_RETURN(auto id, db_->Prepare("SELECT last_insert_rowid()"));
  ASSIGN_OR_RETURN(bool row, id.Step());
  if (!row) return absl::InternalError("no row id after an insert");
  return id.ColumnInt(0);
}

absl::Status PartyStore::EndAlignment(int64_t seq, const std::string& partner_sizes, int64_t shared,
                                      const std::string& outcome) {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("UPDATE alignment_log SET partner_sizes = ?, shared = "
                                         "?, outcome = ? WHERE seq = ?"));
  st.Bind(1, partner_sizes).Bind(2, shared).Bind(3, outcome).Bind(4, seq);
  return st.Run();
}

absl::StatusOr<int64_t> PartyStore::AlignmentsSince(const std::string& partners,
                                                    int64_t since_unix) const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT COUNT(*) FROM alignment_log WHERE partners = ? "
                                         "AND started_unix >= ?"));
  st.Bind(1, partners).Bind(2, since_unix);
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt(0) : 0;
}

absl::StatusOr<std::vector<PartyStore::AlignmentRecord>> PartyStore::Alignments() const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT seq, job_id, started_unix, partners, own_size, "
                                         "partner_sizes, shared, outcome FROM alignment_log "
                                         "ORDER BY seq"));
  std::vector<AlignmentRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back({st.ColumnInt(0), st.ColumnText(1), st.ColumnInt(2), st.ColumnText(3),
                   st.ColumnInt(4), st.ColumnText(5), st.ColumnInt(6), st.ColumnText(7)});
  }
  return out;
}

}  // namespace fedmf::party
