#include "client-device/device_ledger.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/dp/rdp_accountant.h"
#include "common/log/log.h"

namespace fedmf::device {

absl::StatusOr<std::unique_ptr<DeviceLedger>> DeviceLedger::Open(const std::string& path,
                                                                 Budget budget) {
  ASSIGN_OR_RETURN(std::unique_ptr<store::Database> db, store::Database::Open(path));
  if (auto s = (db)->Exec(
          "CREATE TABLE IF NOT EXISTS device_ledger (device INTEGER NOT NULL, job_id TEXT NOT "
          "NULL, iteration INTEGER NOT NULL, noise_multiplier REAL NOT NULL, PRIMARY KEY "
          "(device, job_id, iteration));");
      !s.ok()) {
    return s;
  }
  return std::unique_ptr<DeviceLedger>(new DeviceLedger(std::move(db), budget));
}

absl::StatusOr<std::vector<uint64_t>> DeviceLedger::Charge(const std::vector<uint64_t>& devices,
                                                           const std::string& job_id,
                                                           int32_t iteration, double z) {
  if (std::isnan(z) || z < 0) return absl::InvalidArgumentError("noise multiplier must be >= 0");
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  std::vector<uint64_t> charged;
  for (uint64_t d : devices) {
    // The budget check reads the same transaction, so two charges of one
    // device cannot both pass it.
    if (z == 0 && !budget_.allow_non_private) {
      spdlog::warn("device {}: refusing a release without noise (epsilon = inf) in job '{}'", d,
                   job_id);
      continue;
    }
    if (z > 0) {
      ASSIGN_OR_RETURN(double eps, EpsilonIf(d, z, 1));
      if (!(eps <= budget_.max_epsilon * (1 + 1e-9))) {
        spdlog::warn(
            "device {}: refusing iteration {} of job '{}': it would bring its epsilon to "
            "{:.4g}, over the budget {:.4g} (delta {:.2g})",
            d, iteration, job_id, eps, budget_.max_epsilon, budget_.delta);
        continue;
      }
    }
    ASSIGN_OR_RETURN(auto st,
                     db_->Prepare("INSERT OR IGNORE INTO device_ledger VALUES (?, ?, ?, ?)"));
    if (auto s = st.Bind(1, static_cast<int64_t>(d))
                     .Bind(2, job_id)
                     .Bind(3, int64_t{iteration})
                     .Bind(4, z)
                     .Run();
        !s.ok()) {
      return s;
    }
    auto changes = db_->Prepare("SELECT changes()");
    if (!changes.ok()) return changes.status();
    ASSIGN_OR_RETURN(bool row, changes->Step());
    if (row && changes->ColumnInt(0) > 0) charged.push_back(d);
  }
  RETURN_IF_ERROR(tx.Commit());
  return charged;
}

absl::StatusOr<double> DeviceLedger::EpsilonIf(uint64_t device, double extra_z,
                                               int64_t extra_steps) const {
  auto st = db_->Prepare(
      "SELECT noise_multiplier, COUNT(*) FROM device_ledger WHERE device = ? GROUP BY "
      "noise_multiplier");
  if (!st.ok()) return st.status();
  st->Bind(1, static_cast<int64_t>(device));
  // LFL releases are full-participation Gaussian releases (q = 1), as the
  // job's own accounting (lfl::CalibrateSigmaV) counts them.
  dp::RdpAccountant acc;
  bool any = false;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    const double z = st->ColumnDouble(0);
    if (!(z > 0)) return std::numeric_limits<double>::infinity();
    acc.AddSteps(1.0, z, st->ColumnInt(1));
    any = true;
  }
  if (extra_steps > 0) {
    if (!(extra_z > 0)) return std::numeric_limits<double>::infinity();
    acc.AddSteps(1.0, extra_z, extra_steps);
    any = true;
  }
  if (!any) return 0.0;
  ASSIGN_OR_RETURN(dp::EpsilonResult r, acc.GetEpsilon(budget_.delta));
  return r.epsilon;
}

absl::StatusOr<int64_t> DeviceLedger::Releases(uint64_t device, const std::string& job_id) const {
  ASSIGN_OR_RETURN(
      auto st, db_->Prepare("SELECT COUNT(*) FROM device_ledger WHERE device = ? AND job_id = ?"));
  st.Bind(1, static_cast<int64_t>(device)).Bind(2, job_id);
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt(0) : 0;
}

absl::StatusOr<int64_t> DeviceLedger::MaxReleases(const std::string& job_id) const {
  auto st = db_->Prepare(
      "SELECT COALESCE(MAX(c), 0) FROM (SELECT COUNT(*) AS c FROM device_ledger WHERE job_id = ? "
      "GROUP BY device)");
  if (!st.ok()) return st.status();
  st->Bind(1, job_id);
  ASSIGN_OR_RETURN(bool row, st->Step());
  return row ? st->ColumnInt(0) : 0;
}

std::string BudgetRefusal(const DeviceLedger& ledger, int64_t first, int64_t count, double z,
                          int64_t steps, const std::string& what) {
  const DeviceLedger::Budget& b = ledger.budget();
  if (z == 0) return b.allow_non_private ? "" : "a release without noise";
  for (int64_t d = first; d < first + count; ++d) {
    absl::StatusOr<double> eps = ledger.EpsilonIf(static_cast<uint64_t>(d), z, steps);
    if (!eps.ok()) return std::string(eps.status().message());
    if (!(*eps <= b.max_epsilon * (1 + 1e-9))) {
      return absl::StrCat(what, " ", d, " would reach epsilon ", *eps, " after the job's ", steps,
                          " releases, over its budget ", b.max_epsilon, " (max_epsilon, delta ",
                          b.delta, ")");
    }
  }
  return "";
}

}  // namespace fedmf::device
