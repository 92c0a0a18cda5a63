#include "server/lfl/lfl_store.h"

#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"

namespace fedmf::server {

absl::StatusOr<std::unique_ptr<LflStore>> LflStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<store::Database> db, store::Database::Open(path));
  if (auto s = (db)->Exec(
          "CREATE TABLE IF NOT EXISTS lfl_jobs (job_id TEXT PRIMARY KEY, spec BLOB NOT NULL, "
          "state INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '', status BLOB NOT NULL);"
          "CREATE TABLE IF NOT EXISTS lfl_iterations (job_id TEXT NOT NULL, iteration INTEGER "
          "NOT NULL, record BLOB NOT NULL, PRIMARY KEY (job_id, iteration));"
          "CREATE TABLE IF NOT EXISTS lfl_models (job_id TEXT PRIMARY KEY, iteration INTEGER "
          "NOT NULL, rows INTEGER NOT NULL, cols INTEGER NOT NULL, data BLOB NOT NULL);");
      !s.ok()) {
    return s;
  }
  return std::unique_ptr<LflStore>(new LflStore(std::move(db)));
}

absl::Status LflStore::CreateJob(const v1::JobSpec& spec) {
  ASSIGN_OR_RETURN(bool known, HasJob(spec.job_id()));
  if (known) {
    return absl::AlreadyExistsError(
        absl::StrCat("field 'job_id': '", spec.job_id(), "' already exists"));
  }
  ASSIGN_OR_RETURN(
      auto st,
      db_->Prepare("INSERT INTO lfl_jobs (job_id, spec, state, status) VALUES (?, ?, ?, ?)"));
  const std::string blob = spec.SerializeAsString();
  const std::string empty = v1::LflStatus().SerializeAsString();
  return st.Bind(1, spec.job_id())
      .BindBlob(2, blob.data(), blob.size())
      .Bind(3, int64_t{v1::JOB_STATE_WAITING})
      .BindBlob(4, empty.data(), empty.size())
      .Run();
}

absl::Status LflStore::SaveJob(const std::string& job_id, v1::JobState state,
                               const std::string& error, const v1::LflStatus& status) {
  ASSIGN_OR_RETURN(
      auto st,
      db_->Prepare("UPDATE lfl_jobs SET state = ?, error = ?, status = ? WHERE job_id = ?"));
  const std::string blob = status.SerializeAsString();
  return st.Bind(1, int64_t{state})
      .Bind(2, error)
      .BindBlob(3, blob.data(), blob.size())
      .Bind(4, job_id)
      .Run();
}

absl::Status LflStore::CommitIteration(const std::string& job_id,
                                       const v1::LflIterationRecord& record,
                                       const mf::Matrix& next_v, const v1::LflStatus& status) {
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  ASSIGN_OR_RETURN(auto it, db_->Prepare("INSERT OR REPLACE INTO lfl_iterations VALUES (?, ?, ?)"));
  const std::string rec = record.SerializeAsString();
  if (auto s = it.Bind(1, job_id)
                   .Bind(2, int64_t{record.iteration()})
                   .BindBlob(3, rec.data(), rec.size())
                   .Run();
      !s.ok()) {
    return s;
  }
  ASSIGN_OR_RETURN(auto m,
                   db_->Prepare("INSERT OR REPLACE INTO lfl_models VALUES (?, ?, ?, ?, ?)"));
  const std::string data =
      store::MatrixValuesToBlob(next_v.data(), static_cast<size_t>(next_v.size()));
  if (auto s = m.Bind(1, job_id)
                   .Bind(2, int64_t{record.iteration() + 1})
                   .Bind(3, int64_t{next_v.rows()})
                   .Bind(4, int64_t{next_v.cols()})
                   .BindBlob(5, data.data(), data.size())
                   .Run();
      !s.ok()) {
    return s;
  }
  RETURN_IF_ERROR(SaveJob(job_id, v1::JOB_STATE_RUNNING, "", status));
  return tx.Commit();
}

absl::StatusOr<v1::JobStatus> LflStore::LoadJob(const std::string& job_id) const {
  ASSIGN_OR_RETURN(
      auto st, db_->Prepare("SELECT spec, state, error, status FROM lfl_jobs WHERE job_id = ?"));
  st.Bind(1, job_id);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) {
    return absl::NotFoundError(absl::StrCat("no job '", base::EscapePeerText(job_id, 128), "'"));
  }
  v1::JobStatus out;
  if (!out.mutable_spec()->ParseFromString(st.ColumnBlob(0)) ||
      !out.mutable_lfl()->ParseFromString(st.ColumnBlob(3))) {
    return absl::DataLossError(absl::StrCat("job '", job_id, "': corrupt row in lfl_jobs"));
  }
  out.set_state(static_cast<v1::JobState>(st.ColumnInt(1)));
  out.set_error(st.ColumnText(2));
  out.set_round(out.lfl().iterations_size());
  return out;
}

absl::StatusOr<std::vector<std::string>> LflStore::RunningJobs() const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT job_id FROM lfl_jobs WHERE state IN (?, ?)"));
  st.Bind(1, int64_t{v1::JOB_STATE_WAITING}).Bind(2, int64_t{v1::JOB_STATE_RUNNING});
  return st.TextColumn(0);
}

absl::StatusOr<std::vector<std::string>> LflStore::JobIds() const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT job_id FROM lfl_jobs ORDER BY rowid"));
  return st.TextColumn(0);
}

absl::StatusOr<bool> LflStore::HasJob(const std::string& job_id) const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT 1 FROM lfl_jobs WHERE job_id = ?"));
  st.Bind(1, job_id);
  return st.Step();
}

}  // namespace fedmf::server
