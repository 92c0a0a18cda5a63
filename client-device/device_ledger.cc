#include "client-device/device_ledger.h"

namespace fedmf::device {

absl::StatusOr<std::unique_ptr<DeviceLedger>> DeviceLedger::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<store::Database>> db = store::Database::Open(path);
  if (!db.ok()) return db.status();
  if (auto s = (*db)->Exec(
          "CREATE TABLE IF NOT EXISTS device_ledger (device INTEGER NOT NULL, job_id TEXT NOT "
          "NULL, iteration INTEGER NOT NULL, noise_multiplier REAL NOT NULL, PRIMARY KEY "
          "(device, job_id, iteration));");
      !s.ok()) {
    return s;
  }
  return std::unique_ptr<DeviceLedger>(new DeviceLedger(*std::move(db)));
}

absl::StatusOr<std::vector<uint64_t>> DeviceLedger::Charge(const std::vector<uint64_t>& devices,
                                                           const std::string& job_id,
                                                           int32_t iteration, double z) {
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  std::vector<uint64_t> charged;
  for (uint64_t d : devices) {
    auto st = db_->Prepare("INSERT OR IGNORE INTO device_ledger VALUES (?, ?, ?, ?)");
    if (!st.ok()) return st.status();
    if (auto s = st->Bind(1, static_cast<int64_t>(d)).Bind(2, job_id).Bind(3, int64_t{iteration})
                     .Bind(4, z)
                     .Run();
        !s.ok()) {
      return s;
    }
    auto changes = db_->Prepare("SELECT changes()");
    if (!changes.ok()) return changes.status();
    absl::StatusOr<bool> row = changes->Step();
    if (!row.ok()) return row.status();
    if (*row && changes->ColumnInt(0) > 0) charged.push_back(d);
  }
  if (auto s = tx.Commit(); !s.ok()) return s;
  return charged;
}

absl::StatusOr<int64_t> DeviceLedger::Releases(uint64_t device, const std::string& job_id) const {
  auto st = db_->Prepare("SELECT COUNT(*) FROM device_ledger WHERE device = ? AND job_id = ?");
  if (!st.ok()) return st.status();
  st->Bind(1, static_cast<int64_t>(device)).Bind(2, job_id);
  absl::StatusOr<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row ? st->ColumnInt(0) : 0;
}

absl::StatusOr<int64_t> DeviceLedger::MaxReleases(const std::string& job_id) const {
  auto st = db_->Prepare(
      "SELECT COALESCE(MAX(c), 0) FROM (SELECT COUNT(*) AS c FROM device_ledger WHERE job_id = ? "
      "GROUP BY device)");
  if (!st.ok()) return st.status();
  st->Bind(1, job_id);
  absl::StatusOr<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row ? st->ColumnInt(0) : 0;
}

}  // namespace fedmf::device
