#include "server/fmf/job_coordinator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/fmf/wire/job_codec.h"
#include "common/log/log.h"
#include "common/random/csprng.h"

namespace fedmf::server {
JobCoordinator::JobCoordinator(ServerStore* store, CoordinatorOptions options)
    : store_(store),
      options_(std::move(options)),
      loop_(
          &mu_, {.tick = absl::Milliseconds(200), .poll = options_.poll, .clock = options_.clock},
          [this](absl::Time now) {
            mu_.AssertHeld();
            return AdvanceLocked(now);
          },
          [this](const std::string& why) {
            mu_.AssertHeld();
            if (job_.has_value()) FailJobLocked(why);
          }) {}

JobCoordinator::~JobCoordinator() { Stop(); }

bool JobCoordinator::Takes(v1::Setting setting) const {
  return setting == v1::SETTING_VFL || setting == v1::SETTING_HFL ||
         setting == v1::SETTING_HFL_SYNSGD || setting == v1::SETTING_COUPLING;
}

absl::Status JobCoordinator::Start() {
  {
    absl::MutexLock lock(&mu_);
    RETURN_IF_ERROR(LoadActiveLocked());
    if (job_.has_value()) {
      spdlog::info("resuming job '{}' from the database at round {} ({})", job_->id(),
                   job_->stored().round, v1::JobState_Name(job_->stored().state));
      // A restarted server has an empty liveness map, so without a grace
      // period the first party to reconnect (they retry with jittered
      // backoff) would close the resumed round alone, and every party a few
      // milliseconds slower would be dropped from a round whose update it
      // had already computed, charged to its ledger and persisted (its
      // resend then arrives too late): budget spent for nothing, and a
      // result that differs from an uninterrupted run. Wait one liveness
      // window for every acceptor, as if each had just been seen.
      resume_grace_until_ = loop_.Now() + options_.liveness;
    }
  }
  loop_.Start();
  return absl::OkStatus();
}

void JobCoordinator::NotifyLocked() { loop_.Notify(); }

void JobCoordinator::Stop() { loop_.Stop(); }

absl::Status JobCoordinator::LoadActiveLocked() {
  job_.reset();
  // Each pass loads the oldest active job or marks it FAILED, so this ends.
  while (true) {
    ASSIGN_OR_RETURN(auto id, store_->ActiveJobId());
    if (!id.has_value()) return absl::OkStatus();
    absl::Status s = LifecycleLoop::GuardAllocation("restoring it", [&] {
      mu_.AssertHeld();  // called right here, under the lock this function holds
      return LoadJobLocked(*id);
    });
    if (s.ok()) return absl::OkStatus();
    job_.reset();
    const std::string why = absl::StrCat("cannot resume from the stored state: ", s.message());
    spdlog::error("job '{}' failed: {}", *id, why);
    // If even this write fails, the database is the problem: report it
    // rather than loop on the same job.
    RETURN_IF_ERROR(store_->SetJobState(*id, v1::JOB_STATE_FAILED, why));
    ++counters_.jobs_failed;
  }
}

absl::Status JobCoordinator::LoadJobLocked(const std::string& id) {
  ASSIGN_OR_RETURN(StoredJob stored, store_->LoadJob(id));
  ASSIGN_OR_RETURN(FmfJob job, FmfJob::Restore(std::move(stored), options_, loop_.Now(),
                                               random::Csprng::FromOsEntropy()));
  job_.emplace(std::move(job));
  return absl::OkStatus();
}

// ------------------------------------------------------------------ operators

absl::StatusOr<std::string> JobCoordinator::SubmitJob(const v1::JobSpec& spec,
                                                      const std::string& submitter) {
  if (spec.has_seed() || spec.seed() != 0) {
    // Whoever knows a party's seed can regenerate and subtract its noise.
    return absl::InvalidArgumentError(
        "field 'seed': a job must not carry a seed (each party draws its own noise; for a "
        "reproducible run set noise_seed in the party configs and seed in the server's)");
  }
  RETURN_IF_ERROR(CheckJobSpecSizes(spec, options_.limits));
  ASSIGN_OR_RETURN(auto config, net::JobConfigFromSpec(spec));
  if (spec.roster_size() < 1) {
    return absl::InvalidArgumentError("field 'roster': list the parties (certificate names)");
  }
  for (int i = 0; i < spec.roster_size(); ++i) {
    for (int j = 0; j < i; ++j) {
      if (spec.roster(i) == spec.roster(j)) {
        return absl::InvalidArgumentError(
            absl::StrCat("field 'roster': '", spec.roster(i), "' listed twice"));
      }
    }
  }
  std::vector<std::string> unknown;
  for (const std::string& name : spec.roster()) {
    if (!AllowedParty(name)) unknown.push_back(absl::StrCat("'", name, "'"));
  }
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field 'roster': ", absl::StrJoin(unknown, ", "), unknown.size() == 1 ? " is" : " are",
        " not in this server's allowed_parties (", absl::StrJoin(options_.allowed_parties, ", "),
        "): fix the name, or add the party to allowed_parties in the server config"));
  }
  if (spec.min_parties() < 0 || spec.min_parties() > spec.roster_size()) {
    return absl::InvalidArgumentError("field 'min_parties': must be in [0, roster size]");
  }
  if (spec.round_deadline_seconds() < 0 || !std::isfinite(spec.round_deadline_seconds())) {
    return absl::InvalidArgumentError("field 'round_deadline_seconds': must be >= 0");
  }
  // min_parties 0 (unset) = the whole roster: a job runs with fewer parties
  // only when its submitter says so.
  v1::JobSpec stored = spec;
  if (stored.min_parties() == 0) stored.set_min_parties(stored.roster_size());
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(store_->CreateJob(stored, submitter));
  spdlog::info("job '{}' submitted: {} parties, T={}, T'={}, epsilon={}", spec.job_id(),
               spec.roster_size(), spec.rounds(), spec.local_iters(), spec.epsilon());
  NotifyLocked();
  return spec.job_id();
}

void JobCoordinator::AwaitJobChange(const std::string& job_id, v1::JobState known_state,
                                    int32_t known_rounds, absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + wait;  // how long the call is held: real time
  // Parked calls wake whenever the lifecycle changes state (a round closed,
  // the job finished or failed) and on other events: look again.
  while (!loop_.stopping() && job_.has_value() && job_->id() == job_id) {
    const StoredJob& stored = job_->stored();
    if (stored.state != known_state) return;
    if (known_rounds >= 0 && static_cast<int64_t>(stored.rounds.size()) != known_rounds) return;
    if (!loop_.Park(deadline)) return;  // timed out
  }
}

absl::StatusOr<v1::JobStatus> JobCoordinator::GetJob(const std::string& job_id) {
  {
    absl::MutexLock lock(&mu_);
    // The running job is read in place: a copy of its state (the shared
    // matrix and every round's reports) per look cost operators' polls, and
    // the parties waiting on this lock, more than building the status.
    if (job_.has_value() && job_->id() == job_id) return StatusLocked(job_->stored());
    if (history_ == nullptr) {
      ASSIGN_OR_RETURN(StoredJob loaded, store_->LoadJobSummary(job_id));
      return StatusLocked(loaded);
    }
  }
  // Any other job is read from the history connection without the lock, and
  // without its shared matrix (an ended 1M x 20 job's 160 MB once held every
  // party's Heartbeat for half a second per look).
  ASSIGN_OR_RETURN(StoredJob loaded, history_->LoadJobSummary(job_id));
  absl::MutexLock lock(&mu_);
  return StatusLocked(loaded);
}

v1::JobStatus JobCoordinator::StatusLocked(const StoredJob& stored) const {
  const std::string& job_id = stored.spec.job_id();
  const size_t max_text = static_cast<size_t>(options_.limits.max_text_bytes);
  v1::JobStatus status;
  *status.mutable_spec() = stored.spec;
  status.set_state(stored.state);
  status.set_round(stored.round);
  // Bounded on the way out too: a database written before the bound (a
  // refusal of 8 MB copied into the error) must not break every job view.
  status.set_error(base::EscapePeerText(stored.error, 8 * max_text));
  for (const StoredParty& p : stored.parties) {
    v1::PartyStatus* ps = status.add_parties();
    ps->set_name(p.name);
    ps->set_accepted(p.accepted);
    ps->set_refusal(base::EscapePeerText(p.refusal, max_text));
    ps->set_epsilon_spent(p.epsilon);
    if (!p.accepted && p.epsilon == 0) {
      // A refusal (or no answer) carries no spend: show the ledger as the party last
      // reported it (to any job since this server started).
      if (auto it = counters_.epsilon_by_party.find(p.name);
          it != counters_.epsilon_by_party.end()) {
        ps->set_epsilon_spent(it->second);
      }
    }
    ps->set_test_mse(p.test_mse);
    ps->set_test_count(p.test_count);
    ps->set_last_round(p.last_round);
    ps->set_connected(LiveLocked(p.name));
    ps->set_replied(p.replied);
    if (auto t = traffic_.find({job_id, p.name}); t != traffic_.end()) {
      ps->set_bytes_up(t->second.up);
      ps->set_bytes_down(t->second.down);
    }
    if (stored.spec.align_users() && p.accepted && status.aligned_users() == 0) {
      status.set_aligned_users(p.global_users);  // every acceptor's, checked equal at its reply
    }
  }
  if (stored.state == v1::JOB_STATE_WAITING && job_.has_value() && job_->id() != job_id) {
    status.set_queued_behind(job_->id());
  }
  for (const auto& r : stored.rounds) {
    v1::RoundRecord* out = status.add_rounds();
    *out = r;
    if (auto it = stored.reports.find(r.round()); it != stored.reports.end()) {
      for (const v1::PartyRoundReport& rep : it->second) *out->add_reports() = rep;
    }
  }
  // Each party's latest report (rounds ascend) holds its spend on this job.
  std::map<std::string, double> job_epsilon;
  for (const auto& [round, reports] : stored.reports) {
    for (const v1::PartyRoundReport& rep : reports) job_epsilon[rep.party()] = rep.job_epsilon();
  }
  for (v1::PartyStatus& ps : *status.mutable_parties()) {
    if (auto it = job_epsilon.find(ps.name()); it != job_epsilon.end()) {
      ps.set_job_epsilon(it->second);
    }
  }
  status.set_rounds_completed(status.rounds_size());
  return status;
}

void JobCoordinator::CountMatrixTraffic(const std::string& job_id, const std::string& party,
                                        int64_t up, int64_t down) {
  absl::MutexLock lock(&mu_);
  Traffic& t = traffic_[{job_id, party}];
  t.up += up;
  t.down += down;
}

absl::StatusOr<std::vector<std::string>> JobCoordinator::JobIds() {
  if (history_ != nullptr) return history_->JobIds();
  absl::MutexLock lock(&mu_);
  return store_->JobIds();
}

absl::StatusOr<v1::JobState> JobCoordinator::CancelJob(const std::string& job_id,
                                                       const std::string& by, bool admin) {
  absl::MutexLock lock(&mu_);
  const std::string why = absl::StrCat("cancelled by operator ", by);
  auto refuse = [&](const std::string& submitter) -> absl::Status {
    if (admin || (!submitter.empty() && submitter == by)) return absl::OkStatus();
    return absl::PermissionDeniedError(absl::StrCat(
        "operator '", by, "' did not submit job '", base::EscapePeerText(job_id, 128),
        "': only its submitter or an operator listed in the server's admin_operators may "
        "cancel it"));
  };
  if (job_.has_value() && job_->id() == job_id) {
    RETURN_IF_ERROR(refuse(job_->stored().submitter));
    const v1::JobState was = job_->stored().state;
    FailJobLocked(why);  // the parties are told to abort; the runner takes the next job
    NotifyLocked();
    return was;
  }
  ASSIGN_OR_RETURN(StoredJob stored, store_->LoadJobSummary(job_id));
  RETURN_IF_ERROR(refuse(stored.submitter));
  if (stored.state != v1::JOB_STATE_WAITING) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", job_id, "' has ended (", v1::JobState_Name(stored.state), "): nothing to cancel"));
  }
  // Queued behind the active job: it never started, so nobody was offered it.
  RETURN_IF_ERROR(
      store_->SetJobState(job_id, v1::JOB_STATE_FAILED, absl::StrCat(why, " before it started")));
  spdlog::info("job '{}' {} before it started", job_id, why);
  NotifyLocked();
  return v1::JOB_STATE_WAITING;
}

v1::ListPartiesResponse JobCoordinator::ListParties() {
  absl::MutexLock lock(&mu_);
  v1::ListPartiesResponse out;
  for (const auto& [name, seen] : last_seen_) {
    v1::PartyStatus* p = out.add_parties();
    p->set_name(name);
    p->set_connected(LiveLocked(name));
  }
  return out;
}

// ------------------------------------------------------------------ parties

bool JobCoordinator::LiveLocked(const std::string& party) const {
  auto it = last_seen_.find(party);
  return it != last_seen_.end() && loop_.Now() - it->second <= options_.liveness;
}

bool JobCoordinator::AwaitedLocked(const std::string& party, absl::Time now) const {
  return LiveLocked(party) || now < resume_grace_until_;
}

absl::Status JobCoordinator::Register(const std::string& party, const std::string& state_id) {
  if (!AllowedParty(party)) {
    return absl::PermissionDeniedError(
        absl::StrCat("party '", party, "' is not allowed on this server"));
  }
  absl::MutexLock lock(&mu_);
  auto held = state_ids_.find(party);
  if (held != state_ids_.end() && held->second != state_id && LiveLocked(party)) {
    spdlog::warn("refused a second registration of '{}' from another state directory", party);
    return absl::AlreadyExistsError(absl::StrCat(
        "party '", party,
        "' is already connected from another state directory (another "
        "fedmf-party process with this certificate): two processes would train and spend the "
        "budget twice; stop the other one (this registration is accepted once it has been silent "
        "for ",
        absl::FormatDuration(options_.liveness), ")"));
  }
  const bool known = last_seen_.count(party) > 0;
  last_seen_[party] = loop_.Now();
  state_ids_[party] = state_id;
  if (!known) spdlog::info("party '{}' registered", party);
  NotifyLocked();
  return absl::OkStatus();
}

bool JobCoordinator::AllowedParty(const std::string& party) const {
  return options_.allowed_parties.empty() ||
         std::find(options_.allowed_parties.begin(), options_.allowed_parties.end(), party) !=
             options_.allowed_parties.end();
}

absl::StatusOr<int32_t> JobCoordinator::RosterIndexLocked(const std::string& party,
                                                          const std::string& job_id) const {
  if (!job_.has_value()) return FmfJob::NotInJob(party, job_id);
  return job_->RosterIndex(party, job_id);
}

absl::Status JobCoordinator::ExpectsUploadFrom(const std::string& party) {
  if (!AllowedParty(party)) {
    return absl::PermissionDeniedError(
        absl::StrCat("party '", party, "' is not allowed on this server"));
  }
  absl::MutexLock lock(&mu_);
  if (job_.has_value()) {
    if (auto idx = job_->RosterIndex(party, job_->id()); idx.ok()) {
      if (job_->TakesUpdatesFrom(*idx)) return absl::OkStatus();
      return absl::FailedPreconditionError("no round is open for this party");
    }
  }
  return absl::PermissionDeniedError(
      absl::StrCat("party '", party, "' has no part in an active job: no upload is expected"));
}

v1::Task JobCoordinator::ComputeTaskLocked(const std::string& party) const {
  if (!aborted_job_.empty()) {
    auto it = abort_pending_.find(party);
    if (it != abort_pending_.end() && it->second) {
      v1::Task task;
      task.set_kind(v1::TASK_KIND_ABORT);
      task.set_job_id(aborted_job_);
      task.set_reason("the job failed on the server");
      return task;
    }
  }
  if (job_.has_value()) return job_->TaskFor(party);
  v1::Task idle;
  idle.set_kind(v1::TASK_KIND_IDLE);
  return idle;
}

absl::Status JobCoordinator::Heartbeat(const std::string& party) {
  absl::MutexLock lock(&mu_);
  auto it = last_seen_.find(party);
  if (it == last_seen_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("party '", party, "' is not registered: call Register first"));
  }
  it->second = loop_.Now();
  return absl::OkStatus();
}

v1::Task JobCoordinator::GetTask(const std::string& party) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = loop_.PollDeadline();
  while (true) {
    last_seen_[party] = loop_.Now();
    v1::Task task = ComputeTaskLocked(party);
    if (task.kind() == v1::TASK_KIND_ABORT) abort_pending_[party] = false;
    if (task.kind() != v1::TASK_KIND_IDLE || loop_.stopping()) return task;
    if (!loop_.Park(deadline)) return task;
  }
}

absl::Status JobCoordinator::ReplyOffer(const std::string& party, const v1::OfferReply& reply) {
  absl::MutexLock lock(&mu_);
  last_seen_[party] = loop_.Now();
  ASSIGN_OR_RETURN(const int32_t idx, RosterIndexLocked(party, reply.job_id()));
  ASSIGN_OR_RETURN(std::optional<StoredParty> to_store, job_->ReplyOffer(idx, reply));
  if (to_store.has_value()) RETURN_IF_ERROR(store_->SaveParty(reply.job_id(), *to_store));
  NotifyLocked();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const mf::Matrix>> JobCoordinator::SharedFor(
    const std::string& party, const std::string& job_id, int32_t round) {
  absl::MutexLock lock(&mu_);
  last_seen_[party] = loop_.Now();
  ASSIGN_OR_RETURN(const int32_t idx, RosterIndexLocked(party, job_id));
  return job_->SharedFor(idx, round);
}

absl::StatusOr<std::pair<int32_t, int32_t>> JobCoordinator::UploadShape(const std::string& party,
                                                                        const std::string& job_id,
                                                                        int32_t round) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(const int32_t idx, RosterIndexLocked(party, job_id));
  return job_->UploadShape(idx, round);
}

absl::Status JobCoordinator::SubmitUpdate(const std::string& party, const std::string& job_id,
                                          int32_t round, const mf::Matrix& update) {
  absl::MutexLock lock(&mu_);
  last_seen_[party] = loop_.Now();
  ASSIGN_OR_RETURN(const int32_t idx, RosterIndexLocked(party, job_id));
  if (!job_->TakesUpdatesFrom(idx)) {
    return absl::FailedPreconditionError("no round is open for this party");
  }
  if (absl::Status s = job_->SubmitUpdate(idx, round, update); !s.ok()) {
    ++counters_.updates_rejected;
    spdlog::warn("rejected update from '{}' for job '{}' round {}: {}", party, job_id, round,
                 s.message());
    return s;
  }
  // Only the lifecycle acts on an update (it closes the round once every
  // awaited party is in); the parties parked in GetTask see nothing new until
  // it does, and waking all of them on every upload cost ~90 context
  // switches per round of ten.
  loop_.Wake();
  return absl::OkStatus();
}

absl::Status JobCoordinator::ReportPrivacy(const std::string& party,
                                           const v1::PrivacyReport& report) {
  absl::MutexLock lock(&mu_);
  last_seen_[party] = loop_.Now();
  ASSIGN_OR_RETURN(const int32_t idx, RosterIndexLocked(party, report.job_id()));
  ASSIGN_OR_RETURN(v1::PartyRoundReport history, job_->CheckReport(idx, report));
  counters_.epsilon_by_party[party] = report.epsilon_spent();
  StoredParty after = job_->PartyAfterReport(idx, report);
  RETURN_IF_ERROR(store_->SaveRoundReport(report.job_id(), report.round(), history, after));
  job_->ApplyReport(idx, report.round(), std::move(after), std::move(history));
  loop_.Wake();  // as for an update: only the lifecycle acts on it
  return absl::OkStatus();
}

CoordinatorCounters JobCoordinator::counters() {
  absl::MutexLock lock(&mu_);
  return counters_;
}

// ------------------------------------------------------------------ lifecycle

void JobCoordinator::FailJobLocked(const std::string& why) {
  const std::string id = job_->id();
  spdlog::error("job '{}' failed: {}", id, why);
  // The in-memory job ends either way; if the database did not take it, a
  // restart resumes the job from its last stored round (and fails it again
  // if the cause persists), which the operator must know.
  if (absl::Status s = store_->SetJobState(id, v1::JOB_STATE_FAILED, why); !s.ok()) {
    spdlog::error("job '{}': could not store its FAILED state ({}); a restart will resume it", id,
                  s.message());
  }
  aborted_job_ = id;
  abort_pending_.clear();
  for (const StoredParty& p : job_->stored().parties) {
    if (p.accepted) abort_pending_[p.name] = true;
  }
  ++counters_.jobs_failed;
  if (job_->started()) ++counters_.aggregation_aborts;
  job_.reset();
}

bool JobCoordinator::AdvanceLocked(absl::Time now) {
  if (!job_.has_value()) {
    if (absl::Status s = LoadActiveLocked(); !s.ok()) {
      spdlog::error("cannot load the next job: {}", s.message());
      return false;
    }
    return job_.has_value();
  }
  std::set<std::string> awaited;
  for (const StoredParty& p : job_->stored().parties) {
    if (AwaitedLocked(p.name, now)) awaited.insert(p.name);
  }
  const FmfJob::Step step =
      job_->Advance(now, [&](const std::string& party) { return awaited.contains(party); });
  const std::string id = job_->id();
  switch (step.kind) {
    case FmfJob::Step::Kind::kNone: return false;
    case FmfJob::Step::Kind::kChanged: return true;
    case FmfJob::Step::Kind::kStarted:
      if (absl::Status s = store_->StartRunning(id, *job_->stored().shared); !s.ok()) {
        FailJobLocked(std::string(s.message()));
      }
      return true;
    case FmfJob::Step::Kind::kRoundClosed:
      if (absl::Status s = store_->CommitRound(id, step.record, *job_->stored().shared); !s.ok()) {
        // Durability is the contract: without the commit we cannot go on.
        spdlog::critical("cannot persist round {}: {}", step.record.round(), s.message());
        FailJobLocked(absl::StrCat("storage failure: ", s.message()));
        return true;
      }
      ++counters_.rounds_completed;
      counters_.dropouts += step.record.missing_size();
      if (options_.on_round) options_.on_round(step.record);
      return true;
    case FmfJob::Step::Kind::kFinished:
      if (absl::Status s = store_->SetJobState(id, v1::JOB_STATE_FINISHED); !s.ok()) {
        spdlog::error(
            "job '{}': could not store its FINISHED state ({}); a restart will run its "
            "finish phase again",
            id, s.message());
      }
      ++counters_.jobs_finished;
      job_.reset();
      return true;
    case FmfJob::Step::Kind::kFailed: FailJobLocked(step.error); return true;
  }
  return false;
}

absl::Status JobCoordinator::PsiSend(const std::string& party, const v1::PsiSendRequest& request) {
  absl::MutexLock lock(&mu_);
  last_seen_[party] = loop_.Now();
  ASSIGN_OR_RETURN(const int32_t idx, RosterIndexLocked(party, request.job_id()));
  RETURN_IF_ERROR(job_->PsiSend(idx, request));
  NotifyLocked();
  return absl::OkStatus();
}

absl::StatusOr<v1::PsiFetchResponse> JobCoordinator::PsiFetch(const std::string& party,
                                                              const v1::PsiFetchRequest& request) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = loop_.PollDeadline();
  while (true) {
    last_seen_[party] = loop_.Now();
    ASSIGN_OR_RETURN(const int32_t idx, RosterIndexLocked(party, request.job_id()));
    ASSIGN_OR_RETURN(v1::PsiFetchResponse response, job_->PsiFetch(idx, request.session()));
    if (!PsiAlignment::Empty(response) || loop_.stopping()) return response;
    if (!loop_.Park(deadline)) return response;
  }
}

}  // namespace fedmf::server
