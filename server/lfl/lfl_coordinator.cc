#include "server/lfl/lfl_coordinator.h"

#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/log/log.h"

namespace fedmf::server {
namespace {

v1::JobState StateOf(LflJob::Stage s) {
  switch (s) {
    case LflJob::Stage::kJoining: return v1::JOB_STATE_WAITING;
    case LflJob::Stage::kFinished: return v1::JOB_STATE_FINISHED;
    case LflJob::Stage::kFailed: return v1::JOB_STATE_FAILED;
    default: return v1::JOB_STATE_RUNNING;
  }
}

bool Terminal(LflJob::Stage s) {
  return s == LflJob::Stage::kFinished || s == LflJob::Stage::kFailed;
}

}  // namespace

LflCoordinator::LflCoordinator(LflStore* store, LflCoordinatorOptions options)
    : store_(store),
      options_(options),
      loop_(
          &mu_, {.tick = absl::Milliseconds(100), .poll = options_.poll, .clock = options_.clock},
          [this](absl::Time now) {
            mu_.AssertHeld();
            return AdvanceLocked(now);
          },
          [this](const std::string& why) {
            mu_.AssertHeld();
            FailLocked(why);
          }) {}

LflCoordinator::~LflCoordinator() { Stop(); }

absl::Status LflCoordinator::Start() {
  ASSIGN_OR_RETURN(std::vector<std::string> running, store_->RunningJobs());
  for (const std::string& id : running) {
    ASSIGN_OR_RETURN(v1::JobStatus st, store_->LoadJob(id));
    spdlog::warn("LFL job '{}' was running when the server stopped; marking it failed", id);
    if (auto s = store_->SaveJob(id, v1::JOB_STATE_FAILED,
                                 "the server restarted; LFL jobs do not resume (device state "
                                 "lives in the hosts' memory): submit it again",
                                 st.lfl());
        !s.ok()) {
      return s;
    }
  }
  loop_.Start();
  return absl::OkStatus();
}

void LflCoordinator::Stop() { loop_.Stop(); }

bool LflCoordinator::AdvanceLocked(absl::Time now) {
  if (job_ == nullptr) return false;
  bool any = false;
  while (!Terminal(job_->stage()) && job_->Advance(now)) {
    any = true;
    PersistLocked();
  }
  if (any) PersistLocked();
  return any;
}

void LflCoordinator::FailLocked(const std::string& why) {
  if (job_ == nullptr) return;
  job_->Abort(why);
  PersistLocked();
}

void LflCoordinator::PersistLocked() {
  for (const v1::LflIterationRecord& r : job_->TakeFinishedIterations()) {
    if (auto s = store_->CommitIteration(job_->job_id(), r, job_->model(), job_->status());
        !s.ok()) {
      spdlog::error("LFL job '{}': cannot persist iteration {}: {}", job_->job_id(), r.iteration(),
                    s.message());
    }
  }
  if (job_->stage() != persisted_stage_) {
    persisted_stage_ = job_->stage();
    if (auto s =
            store_->SaveJob(job_->job_id(), StateOf(job_->stage()), job_->error(), job_->status());
        !s.ok()) {
      spdlog::error("LFL job '{}': cannot persist its state: {}", job_->job_id(), s.message());
    }
  }
}

absl::StatusOr<std::string> LflCoordinator::SubmitJob(const v1::JobSpec& spec,
                                                      const std::string& /*submitter*/) {
  absl::MutexLock lock(&mu_);
  if (job_ != nullptr && !Terminal(job_->stage())) {
    return absl::FailedPreconditionError(
        absl::StrCat("LFL job '", job_->job_id(), "' is still running; submit after it ends"));
  }
  v1::JobSpec s = spec;
  if (s.job_id().empty()) s.set_job_id(absl::StrCat("lfl-", absl::ToUnixMillis(loop_.Now())));
  RETURN_IF_ERROR(CheckJobSpecSizes(s, options_.limits));
  absl::StatusOr<std::unique_ptr<LflJob>> job = LifecycleLoop::GuardAllocation(
      "creating this LFL job (lower its sizes or limits.*)",
      [&] { return LflJob::Create(s, loop_.Now(), options_.liveness); });
  if (!job.ok()) return job.status();
  (*job)->set_unmasking_threads(options_.unmasking_threads);
  (*job)->set_rejection_log_lines_per_minute(options_.limits.rejection_log_lines_per_minute);
  RETURN_IF_ERROR(store_->CreateJob(s));
  job_ = *std::move(job);
  persisted_stage_ = LflJob::Stage::kJoining;
  spdlog::info("LFL job '{}' submitted: {} devices granted to {} hosts, T = {}", s.job_id(),
               job_->status().devices(), s.lfl().grants_size(), s.rounds());
  loop_.Notify();
  return s.job_id();
}

v1::JobStatus LflCoordinator::StatusLocked() const {
  v1::JobStatus st;
  *st.mutable_spec() = job_->spec();
  st.set_state(StateOf(job_->stage()));
  st.set_round(job_->iteration());
  st.set_error(job_->error());
  *st.mutable_lfl() = job_->status();
  return st;
}

absl::StatusOr<v1::JobStatus> LflCoordinator::GetJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  if (job_ != nullptr && (job_id.empty() || job_id == job_->job_id())) return StatusLocked();
  return store_->LoadJob(job_id);
}

absl::StatusOr<std::vector<std::string>> LflCoordinator::JobIds() {
  absl::MutexLock lock(&mu_);
  return store_->JobIds();
}

absl::Status LflCoordinator::ActiveLocked(const std::string& job_id) const {
  if (job_ == nullptr || Terminal(job_->stage()) || (!job_id.empty() && job_id != job_->job_id())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "field 'job_id': '", base::EscapePeerText(job_id, 128), "' is not an active LFL job"));
  }
  return absl::OkStatus();
}

absl::Status LflCoordinator::GrantedLocked(const std::string& host) const {
  if (job_ != nullptr && !Terminal(job_->stage()) && job_->Grants(host)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("host '", host, "' is granted no device in an active job"));
}

absl::Status LflCoordinator::ExpectsSubmitFrom(const std::string& host) {
  absl::MutexLock lock(&mu_);
  return GrantedLocked(host);
}

absl::StatusOr<v1::DeviceTask> LflCoordinator::GetTask(const std::string& host,
                                                       const v1::HostHello& hello) {
  absl::MutexLock lock(&mu_);
  const absl::Time until = loop_.PollDeadline();
  const std::vector<uint64_t> devices(hello.devices().begin(), hello.devices().end());
  // A host without a grant in the job sees what it would see with no job at
  // all: an idle answer after the poll, naming nothing.
  auto granted = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return job_ != nullptr && job_->Grants(host);
  };
  for (;;) {
    if (granted() && (hello.job_id().empty() || hello.job_id() == job_->job_id())) {
      RETURN_IF_ERROR(job_->Hello(host, devices, loop_.Now()));
      v1::DeviceTask t = job_->TaskFor(host);
      if (t.kind() != v1::DEVICE_TASK_KIND_IDLE) return t;
    }
    if (loop_.stopping() || !loop_.Park(until)) break;
  }
  v1::DeviceTask idle;
  idle.set_kind(v1::DEVICE_TASK_KIND_IDLE);
  if (granted()) idle.set_job_id(job_->job_id());
  return idle;
}

absl::StatusOr<mf::Matrix> LflCoordinator::Model(const std::string& host, const std::string& job_id,
                                                 int32_t iteration) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(GrantedLocked(host));  // an outsider learns nothing, not even the job's id
  RETURN_IF_ERROR(ActiveLocked(job_id));
  job_->Touch(host, loop_.Now());
  return job_->Model(host, iteration);
}

absl::StatusOr<std::vector<v1::InboxMessage>> LflCoordinator::Inbox(const std::string& host,
                                                                    const v1::BatchHeader& header) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(GrantedLocked(host));
  RETURN_IF_ERROR(ActiveLocked(header.job_id()));
  job_->Touch(host, loop_.Now());
  return job_->Inbox(host, header);
}

absl::Status LflCoordinator::CheckBatch(const std::string& host, const v1::BatchHeader& header) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(GrantedLocked(host));
  RETURN_IF_ERROR(ActiveLocked(header.job_id()));
  return job_->CheckHeader(host, header);
}

absl::Status LflCoordinator::SubmitOne(const std::string& host, const v1::BatchHeader& header,
                                       const v1::DeviceMessage& message) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(ActiveLocked(header.job_id()));
  job_->Touch(host, loop_.Now());
  // The phase may have closed while the stream was open: SubmitOne checks
  // the header again, after the device's owner.
  return job_->SubmitOne(host, header, message);
}

void LflCoordinator::EndSubmit(const std::string& host, const v1::BatchHeader& header) {
  absl::MutexLock lock(&mu_);
  if (!ActiveLocked(header.job_id()).ok()) return;
  job_->HostSubmitted(host, header);
  loop_.StepNow();
}

absl::Status LflCoordinator::ReportMetrics(const std::string& host,
                                           const v1::DeviceMetricsReport& report) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(GrantedLocked(host));
  RETURN_IF_ERROR(ActiveLocked(report.job_id()));
  RETURN_IF_ERROR(job_->ReportMetrics(host, report));
  loop_.StepNow();
  return absl::OkStatus();
}

}  // namespace fedmf::server
