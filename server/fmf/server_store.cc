#include "server/fmf/server_store.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"

namespace fedmf::server {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT UNIQUE NOT NULL,
  spec BLOB NOT NULL,
  state INTEGER NOT NULL,
  round INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS job_parties (
  job_id TEXT NOT NULL REFERENCES jobs(job_id),
  ord INTEGER NOT NULL,
  name TEXT NOT NULL,
  replied INTEGER NOT NULL DEFAULT 0,
  accepted INTEGER NOT NULL DEFAULT 0,
  refusal TEXT NOT NULL DEFAULT '',
  weight REAL NOT NULL DEFAULT 0,
  users INTEGER NOT NULL DEFAULT 0,
  items INTEGER NOT NULL DEFAULT 0,
  global_users INTEGER NOT NULL DEFAULT 0,
  global_items INTEGER NOT NULL DEFAULT 0,
  epsilon REAL NOT NULL DEFAULT 0,
  test_mse REAL NOT NULL DEFAULT -1,
  test_count INTEGER NOT NULL DEFAULT 0,
  last_round INTEGER NOT NULL DEFAULT -1,
  finished INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, name));
CREATE TABLE IF NOT EXISTS rounds (
  job_id TEXT NOT NULL REFERENCES jobs(job_id),
  round INTEGER NOT NULL,
  contributors TEXT NOT NULL,
  missing TEXT NOT NULL,
  seconds REAL NOT NULL,
  PRIMARY KEY (job_id, round));
CREATE TABLE IF NOT EXISTS round_reports (
  job_id TEXT NOT NULL REFERENCES jobs(job_id),
  round INTEGER NOT NULL,
  party TEXT NOT NULL,
  job_epsilon REAL NOT NULL,
  ledger_epsilon REAL NOT NULL,
  test_mse REAL,
  test_count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, round, party));
CREATE TABLE IF NOT EXISTS shared (
  job_id TEXT PRIMARY KEY REFERENCES jobs(job_id),
  round INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  cols INTEGER NOT NULL,
  data BLOB NOT NULL);
)sql";

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerStore>> ServerStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(auto db, store::Database::Open(path));
  RETURN_IF_ERROR((db)->Exec(kSchema));
  // Databases from before the submitter was kept: their jobs have none (only
  // an admin operator may cancel them).
  {
    ASSIGN_OR_RETURN(auto cols, db->Prepare("SELECT name FROM pragma_table_info('jobs')"));
    ASSIGN_OR_RETURN(std::vector<std::string> names, cols.TextColumn(0));
    if (std::find(names.begin(), names.end(), "submitter") == names.end()) {
      RETURN_IF_ERROR(db->Exec("ALTER TABLE jobs ADD COLUMN submitter TEXT NOT NULL DEFAULT ''"));
    }
  }
  return std::unique_ptr<ServerStore>(new ServerStore(std::move(db)));
}

absl::Status ServerStore::CreateJob(const v1::JobSpec& spec, const std::string& submitter) {
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  {
    ASSIGN_OR_RETURN(auto exists, db_->Prepare("SELECT 1 FROM jobs WHERE job_id = ?"));
    exists.Bind(1, spec.job_id());
    ASSIGN_OR_RETURN(auto row, exists.Step());
    if (row) return absl::AlreadyExistsError(absl::StrCat("job '", spec.job_id(), "' exists"));
  }
  auto ins = db_->Prepare(
      "INSERT INTO jobs (job_id, spec, state, round, updated, submitter) VALUES (?,?,?,0,?,?)");
  if (!ins.ok()) return ins.status();
  const std::string blob = spec.SerializeAsString();
  ins->Bind(1, spec.job_id())
      .BindBlob(2, blob.data(), blob.size())
      .Bind(3, static_cast<int64_t>(v1::JOB_STATE_WAITING))
      .Bind(4, Now())
      .Bind(5, submitter);
  RETURN_IF_ERROR(ins->Run());
  for (int i = 0; i < spec.roster_size(); ++i) {
    ASSIGN_OR_RETURN(auto p,
                     db_->Prepare("INSERT INTO job_parties (job_id, ord, name) VALUES (?,?,?)"));
    p.Bind(1, spec.job_id()).Bind(2, static_cast<int64_t>(i)).Bind(3, spec.roster(i));
    RETURN_IF_ERROR(p.Run());
  }
  return tx.Commit();
}

absl::Status ServerStore::SetJobState(const std::string& job_id, v1::JobState state,
                                      const std::string& error) {
  ASSIGN_OR_RETURN(
      auto st, db_->Prepare("UPDATE jobs SET state = ?, error = ?, updated = ? WHERE job_id = ?"));
  st.Bind(1, static_cast<int64_t>(state)).Bind(2, error).Bind(3, Now()).Bind(4, job_id);
  return st.Run();
}

absl::Status ServerStore::SaveParty(const std::string& job_id, const StoredParty& p) {
  auto st = db_->Prepare(
      "UPDATE job_parties SET replied=?, accepted=?, refusal=?, weight=?, users=?, items=?, "
      "global_users=?, global_items=?, epsilon=?, test_mse=?, test_count=?, last_round=?, "
      "finished=? WHERE job_id=? AND name=?");
  if (!st.ok()) return st.status();
  st->Bind(1, int64_t{p.replied})
      .Bind(2, int64_t{p.accepted})
      .Bind(3, p.refusal)
      .Bind(4, p.weight)
      .Bind(5, int64_t{p.users})
      .Bind(6, int64_t{p.items})
      .Bind(7, int64_t{p.global_users})
      .Bind(8, int64_t{p.global_items})
      .Bind(9, p.epsilon)
      .Bind(10, p.test_mse)
      .Bind(11, p.test_count)
      .Bind(12, int64_t{p.last_round})
      .Bind(13, int64_t{p.finished})
      .Bind(14, job_id)
      .Bind(15, p.name);
  return st->Run();
}

absl::Status ServerStore::SaveShared(const std::string& job_id, int32_t round,
                                     const mf::Matrix& m) {
  auto st = db_->Prepare(
      "INSERT INTO shared (job_id, round, rows, cols, data) VALUES (?,?,?,?,?) "
      "ON CONFLICT(job_id) DO UPDATE SET round=excluded.round, rows=excluded.rows, "
      "cols=excluded.cols, data=excluded.data");
  if (!st.ok()) return st.status();
  const std::string blob = store::MatrixValuesToBlob(m.data(), static_cast<size_t>(m.size()));
  st->Bind(1, job_id)
      .Bind(2, int64_t{round})
      .Bind(3, static_cast<int64_t>(m.rows()))
      .Bind(4, static_cast<int64_t>(m.cols()))
      .BindBlob(5, blob.data(), blob.size());
  RETURN_IF_ERROR(st->Run());
  ASSIGN_OR_RETURN(auto cur,
                   db_->Prepare("UPDATE jobs SET round = ?, updated = ? WHERE job_id = ?"));
  cur.Bind(1, int64_t{round}).Bind(2, Now()).Bind(3, job_id);
  return cur.Run();
}

absl::Status ServerStore::StartRunning(const std::string& job_id, const mf::Matrix& initial) {
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  RETURN_IF_ERROR(SaveShared(job_id, 0, initial));
  RETURN_IF_ERROR(SetJobState(job_id, v1::JOB_STATE_RUNNING));
  return tx.Commit();
}

absl::Status ServerStore::CommitRound(const std::string& job_id, const v1::RoundRecord& r,
                                      const mf::Matrix& next_shared) {
  store::Database::Transaction tx(db_.get());
  if (!tx.begin_status().ok()) return tx.begin_status();
  auto st = db_->Prepare(
      "INSERT INTO rounds (job_id, round, contributors, missing, seconds) VALUES (?,?,?,?,?)");
  if (!st.ok()) return st.status();
  st->Bind(1, job_id)
      .Bind(2, int64_t{r.round()})
      .Bind(3, absl::StrJoin(r.contributors(), ","))
      .Bind(4, absl::StrJoin(r.missing(), ","))
      .Bind(5, r.seconds());
  RETURN_IF_ERROR(st->Run());
  RETURN_IF_ERROR(SaveShared(job_id, r.round() + 1, next_shared));
  return tx.Commit();
}

absl::Status ServerStore::SaveRoundReport(const std::string& job_id, int32_t round,
                                          const v1::PartyRoundReport& r, const StoredParty& party) {
  // One of these per party and round, on the coordinator's lock, was most of
  // the server's syncs. A report is a record of the party's (its ledger holds
  // the spend; the finish phase, not yet FINISHED, asks for its last report
  // again): a power loss may roll back the reports since the last synced
  // commit (a round's, the job state's), a crash of the server does not.
  store::Database::Transaction tx(db_.get(), store::Database::Durability::kDeferredSync);
  if (!tx.begin_status().ok()) return tx.begin_status();
  auto st = db_->Prepare(
      "INSERT INTO round_reports (job_id, round, party, job_epsilon, ledger_epsilon, test_mse, "
      "test_count) VALUES (?,?,?,?,?,?,?) ON CONFLICT(job_id, round, party) DO UPDATE SET "
      "job_epsilon=excluded.job_epsilon, ledger_epsilon=excluded.ledger_epsilon, "
      "test_mse=excluded.test_mse, test_count=excluded.test_count");
  if (!st.ok()) return st.status();
  st->Bind(1, job_id)
      .Bind(2, int64_t{round})
      .Bind(3, r.party())
      .Bind(4, r.job_epsilon())
      .Bind(5, r.ledger_epsilon())
      .Bind(7, r.test_count());
  if (r.has_test_mse()) {
    st->Bind(6, r.test_mse());
  } else {
    st->BindNull(6);
  }
  RETURN_IF_ERROR(st->Run());
  RETURN_IF_ERROR(SaveParty(job_id, party));
  return tx.Commit();
}

absl::StatusOr<StoredJob> ServerStore::LoadJob(const std::string& job_id) const {
  ASSIGN_OR_RETURN(StoredJob job, LoadJobSummary(job_id));
  {
    ASSIGN_OR_RETURN(auto st,
                     db_->Prepare("SELECT round, rows, cols, data FROM shared WHERE job_id = ?"));
    st.Bind(1, job_id);
    ASSIGN_OR_RETURN(auto row, st.Step());
    if (row) {
      const int64_t rows = st.ColumnInt(1), cols = st.ColumnInt(2);
      auto values = store::BlobToMatrixValues(st.ColumnBlob(3), rows, cols);
      if (!values.ok()) {
        return absl::DataLossError(absl::StrCat("job '", job_id, "': ", values.status().message()));
      }
      job.shared = Eigen::Map<mf::Matrix>(values->data(), rows, cols);
    }
  }
  return job;
}

absl::StatusOr<StoredJob> ServerStore::LoadJobSummary(const std::string& job_id) const {
  StoredJob job;
  {
    ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT spec, state, round, error, submitter FROM jobs "
                                           "WHERE job_id = ?"));
    st.Bind(1, job_id);
    ASSIGN_OR_RETURN(auto row, st.Step());
    if (!row) {
      return absl::NotFoundError(absl::StrCat("no job '", base::EscapePeerText(job_id, 128), "'"));
    }
    if (!job.spec.ParseFromString(st.ColumnBlob(0))) {
      return absl::DataLossError(absl::StrCat("job '", job_id, "': stored spec is corrupt"));
    }
    job.state = static_cast<v1::JobState>(st.ColumnInt(1));
    job.round = static_cast<int32_t>(st.ColumnInt(2));
    job.error = st.ColumnText(3);
    job.submitter = st.ColumnText(4);
  }
  {
    auto st = db_->Prepare(
        "SELECT name, replied, accepted, refusal, weight, users, items, global_users, "
        "global_items, epsilon, test_mse, test_count, last_round, finished FROM job_parties "
        "WHERE job_id = ? ORDER BY ord");
    if (!st.ok()) return st.status();
    st->Bind(1, job_id);
    while (true) {
      ASSIGN_OR_RETURN(auto row, st->Step());
      if (!row) break;
      StoredParty p;
      p.name = st->ColumnText(0);
      p.replied = st->ColumnInt(1) != 0;
      p.accepted = st->ColumnInt(2) != 0;
      p.refusal = st->ColumnText(3);
      p.weight = st->ColumnDouble(4);
      p.users = static_cast<int32_t>(st->ColumnInt(5));
      p.items = static_cast<int32_t>(st->ColumnInt(6));
      p.global_users = static_cast<int32_t>(st->ColumnInt(7));
      p.global_items = static_cast<int32_t>(st->ColumnInt(8));
      p.epsilon = st->ColumnDouble(9);
      p.test_mse = st->ColumnDouble(10);
      p.test_count = st->ColumnInt(11);
      p.last_round = static_cast<int32_t>(st->ColumnInt(12));
      p.finished = st->ColumnInt(13) != 0;
      job.parties.push_back(std::move(p));
    }
  }
  {
    auto st = db_->Prepare(
        "SELECT round, contributors, missing, seconds FROM rounds WHERE job_id = ? ORDER BY round");
    if (!st.ok()) return st.status();
    st->Bind(1, job_id);
    while (true) {
      ASSIGN_OR_RETURN(auto row, st->Step());
      if (!row) break;
      v1::RoundRecord r;
      r.set_round(static_cast<int32_t>(st->ColumnInt(0)));
      for (auto name : absl::StrSplit(st->ColumnText(1), ',', absl::SkipEmpty())) {
        r.add_contributors(std::string(name));
      }
      for (auto name : absl::StrSplit(st->ColumnText(2), ',', absl::SkipEmpty())) {
        r.add_missing(std::string(name));
      }
      r.set_seconds(st->ColumnDouble(3));
      job.rounds.push_back(std::move(r));
    }
  }
  {
    auto st = db_->Prepare(
        "SELECT round, party, job_epsilon, ledger_epsilon, test_mse, test_count FROM "
        "round_reports WHERE job_id = ? ORDER BY round, party");
    if (!st.ok()) return st.status();
    st->Bind(1, job_id);
    while (true) {
      ASSIGN_OR_RETURN(auto row, st->Step());
      if (!row) break;
      v1::PartyRoundReport r;
      r.set_party(st->ColumnText(1));
      r.set_job_epsilon(st->ColumnDouble(2));
      r.set_ledger_epsilon(st->ColumnDouble(3));
      if (!st->ColumnIsNull(4)) r.set_test_mse(st->ColumnDouble(4));
      r.set_test_count(st->ColumnInt(5));
      job.reports[static_cast<int32_t>(st->ColumnInt(0))].push_back(std::move(r));
    }
  }
  return job;
}

absl::StatusOr<std::optional<std::string>> ServerStore::ActiveJobId() const {
  ASSIGN_OR_RETURN(
      auto st, db_->Prepare("SELECT job_id FROM jobs WHERE state IN (?, ?) ORDER BY seq LIMIT 1"));
  st.Bind(1, static_cast<int64_t>(v1::JOB_STATE_WAITING))
      .Bind(2, static_cast<int64_t>(v1::JOB_STATE_RUNNING));
  ASSIGN_OR_RETURN(auto row, st.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(st.ColumnText(0));
}

absl::StatusOr<std::vector<std::string>> ServerStore::JobIds() const {
  ASSIGN_OR_RETURN(auto st, db_->Prepare("SELECT job_id FROM jobs ORDER BY seq"));
  return st.TextColumn(0);
}

}  // namespace fedmf::server
