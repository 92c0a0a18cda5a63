#include "server/job_coordinator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <new>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/log/log.h"
#include "common/net/job_codec.h"
#include "common/random/csprng.h"

namespace fedmf::server {
JobCoordinator::JobCoordinator(ServerStore* store, CoordinatorOptions options)
    : store_(store), options_(std::move(options)) {}

JobCoordinator::~JobCoordinator() { Stop(); }

absl::Status JobCoordinator::Start() {
  {
    std::unique_lock lock(mu_);
    RETURN_IF_ERROR(LoadActiveLocked());
    if (job_.has_value()) {
      spdlog::info("resuming job '{}' from the database at round {} ({})",
                   job_->stored.spec.job_id(), job_->stored.round,
                   v1::JobState_Name(job_->stored.state));
      // A restarted server has an empty liveness map, so without a grace
      // period the first party to reconnect (they retry with jittered
      // backoff) would close the resumed round alone, and every party a few
      // milliseconds slower would be dropped from a round whose update it
      // had already computed, charged to its ledger and persisted (its
      // resend then arrives too late): budget spent for nothing, and a
      // result that differs from an uninterrupted run. Wait one liveness
      // window for every acceptor, as if each had just been seen.
      resume_grace_until_ = absl::Now() + options_.liveness;
    }
  }
  runner_ = std::thread([this] { RunLoop(); });
  return absl::OkStatus();
}

void JobCoordinator::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (runner_.joinable()) runner_.join();
}

absl::Status JobCoordinator::LoadActiveLocked() {
  job_.reset();
  // Each pass loads the oldest active job or marks it FAILED, so this ends.
  while (true) {
    auto id = store_->ActiveJobId();
    if (!id.ok()) return id.status();
    if (!id->has_value()) return absl::OkStatus();
    absl::Status s;
    try {
      s = LoadJobLocked(**id);
    } catch (const std::bad_alloc&) {
      s = absl::ResourceExhaustedError("out of memory restoring it");
    } catch (const std::length_error& e) {
      s = absl::ResourceExhaustedError(absl::StrCat("cannot allocate its state: ", e.what()));
    }
    if (s.ok()) return absl::OkStatus();
    job_.reset();
    const std::string why = absl::StrCat("cannot resume from the stored state: ", s.message());
    spdlog::error("job '{}' failed: {}", **id, why);
    // If even this write fails, the database is the problem: report it
    // rather than loop on the same job.
    RETURN_IF_ERROR(store_->SetJobState(**id, v1::JOB_STATE_FAILED, why));
    ++counters_.jobs_failed;
  }
}

absl::Status JobCoordinator::LoadJobLocked(const std::string& id) {
  auto stored = store_->LoadJob(id);
  if (!stored.ok()) return stored.status();
  // A spec that passed validation at submission can only fail here if the
  // code or the limits changed underneath, or a previous version stored it.
  auto config = net::JobConfigFromSpec(stored->spec);
  if (!config.ok()) return config.status();
  RETURN_IF_ERROR(CheckJobSpecSizes(stored->spec, options_.limits));
  const bool vertical = config->split == fmf::SplitKind::kVertical;
  for (const StoredParty& p : stored->parties) {
    if (auto s = CheckDeclaredSizes(absl::StrCat("stored OfferReply of party '", p.name, "'"),
                                    p.users, p.items, p.global_users, p.global_items, vertical,
                                    config->dim, options_.limits);
        !s.ok()) {
      return s;
    }
  }
  ActiveJob job;
  job.stored = std::move(*stored);
  job.config = *config;
  job.phase_started = absl::Now();
  job.round_deadline = job.stored.spec.round_deadline_seconds() > 0
                           ? absl::Seconds(job.stored.spec.round_deadline_seconds())
                           : options_.default_round_deadline;
  for (size_t i = 0; i < job.stored.parties.size(); ++i) {
    job.index[job.stored.parties[i].name] = static_cast<int32_t>(i);
  }
  if (job.stored.state == v1::JOB_STATE_RUNNING) {
    if (!job.stored.shared.has_value()) {
      return absl::DataLossError(absl::StrCat("job '", job.stored.spec.job_id(),
                                              "' is running but has no stored shared matrix"));
    }
    std::vector<fmf::PartyInfo> infos;
    for (const StoredParty& p : job.stored.parties) {
      // Non-acceptors keep a placeholder weight; they never submit.
      infos.push_back({p.name, p.accepted ? p.weight : 1.0});
    }
    auto session =
        fmf::ServerSession::Restore(job.config, infos, job.stored.round, *job.stored.shared);
    if (!session.ok()) return session.status();
    job.session.emplace(std::move(*session));
  }
  job_.emplace(std::move(job));
  return absl::OkStatus();
}

// ------------------------------------------------------------------ operators

absl::StatusOr<std::string> JobCoordinator::SubmitJob(const v1::JobSpec& spec) {
  if (spec.has_seed() || spec.seed() != 0) {
    // Whoever knows a party's seed can regenerate and subtract its noise.
    return absl::InvalidArgumentError(
        "field 'seed': a job must not carry a seed (each party draws its own noise; for a "
        "reproducible run set noise_seed in the party configs and seed in the server's)");
  }
  RETURN_IF_ERROR(CheckJobSpecSizes(spec, options_.limits));
  auto config = net::JobConfigFromSpec(spec);
  if (!config.ok()) return config.status();
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
  std::unique_lock lock(mu_);
  RETURN_IF_ERROR(store_->CreateJob(stored));
  spdlog::info("job '{}' submitted: {} parties, T={}, T'={}, epsilon={}", spec.job_id(),
               spec.roster_size(), spec.rounds(), spec.local_iters(), spec.epsilon());
  changed_.notify_all();
  return spec.job_id();
}

absl::StatusOr<v1::JobStatus> JobCoordinator::GetJob(const std::string& job_id) {
  std::unique_lock lock(mu_);
  StoredJob stored;
  if (job_.has_value() && job_->stored.spec.job_id() == job_id) {
    stored = job_->stored;
  } else {
    auto loaded = store_->LoadJob(job_id);
    if (!loaded.ok()) return loaded.status();
    stored = std::move(*loaded);
  }
  v1::JobStatus status;
  *status.mutable_spec() = stored.spec;
  status.set_state(stored.state);
  status.set_round(stored.round);
  status.set_error(stored.error);
  for (const StoredParty& p : stored.parties) {
    v1::PartyStatus* ps = status.add_parties();
    ps->set_name(p.name);
    ps->set_accepted(p.accepted);
    ps->set_refusal(p.refusal);
    ps->set_epsilon_spent(p.epsilon);
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
  if (stored.state == v1::JOB_STATE_WAITING && job_.has_value() &&
      job_->stored.spec.job_id() != job_id) {
    status.set_queued_behind(job_->stored.spec.job_id());
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
  std::unique_lock lock(mu_);
  Traffic& t = traffic_[{job_id, party}];
  t.up += up;
  t.down += down;
}

absl::StatusOr<std::vector<std::string>> JobCoordinator::JobIds() {
  std::unique_lock lock(mu_);
  return store_->JobIds();
}

absl::StatusOr<v1::JobState> JobCoordinator::CancelJob(const std::string& job_id,
                                                       const std::string& by) {
  std::unique_lock lock(mu_);
  const std::string why = absl::StrCat("cancelled by operator ", by);
  if (job_.has_value() && job_->stored.spec.job_id() == job_id) {
    const v1::JobState was = job_->stored.state;
    FailJobLocked(why);  // the parties are told to abort; the runner takes the next job
    changed_.notify_all();
    return was;
  }
  ASSIGN_OR_RETURN(StoredJob stored, store_->LoadJob(job_id));
  if (stored.state != v1::JOB_STATE_WAITING) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", job_id, "' has ended (", v1::JobState_Name(stored.state), "): nothing to cancel"));
  }
  // Queued behind the active job: it never started, so nobody was offered it.
  RETURN_IF_ERROR(
      store_->SetJobState(job_id, v1::JOB_STATE_FAILED, absl::StrCat(why, " before it started")));
  spdlog::info("job '{}' {} before it started", job_id, why);
  changed_.notify_all();
  return v1::JOB_STATE_WAITING;
}

v1::ListPartiesResponse JobCoordinator::ListParties() {
  std::unique_lock lock(mu_);
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
  return it != last_seen_.end() && absl::Now() - it->second <= options_.liveness;
}

bool JobCoordinator::AwaitedLocked(const std::string& party, absl::Time now) const {
  return LiveLocked(party) || now < resume_grace_until_;
}

absl::Status JobCoordinator::Register(const std::string& party, const std::string& state_id) {
  if (!AllowedParty(party)) {
    return absl::PermissionDeniedError(
        absl::StrCat("party '", party, "' is not allowed on this server"));
  }
  std::unique_lock lock(mu_);
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
  last_seen_[party] = absl::Now();
  state_ids_[party] = state_id;
  if (!known) spdlog::info("party '{}' registered", party);
  changed_.notify_all();
  return absl::OkStatus();
}

bool JobCoordinator::AllowedParty(const std::string& party) const {
  return options_.allowed_parties.empty() ||
         std::find(options_.allowed_parties.begin(), options_.allowed_parties.end(), party) !=
             options_.allowed_parties.end();
}

absl::StatusOr<int32_t> JobCoordinator::RosterIndexLocked(const std::string& party,
                                                          const std::string& job_id) const {
  if (!job_.has_value() || job_->stored.spec.job_id() != job_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("field 'job_id': job '", job_id, "' is not the active job"));
  }
  auto it = job_->index.find(party);
  if (it == job_->index.end()) {
    return absl::PermissionDeniedError(
        absl::StrCat("party '", party, "' is not in the roster of job '", job_id, "'"));
  }
  return it->second;
}

v1::Task JobCoordinator::ComputeTaskLocked(const std::string& party) const {
  v1::Task task;
  task.set_kind(v1::TASK_KIND_IDLE);
  if (!aborted_job_.empty()) {
    auto it = abort_pending_.find(party);
    if (it != abort_pending_.end() && it->second) {
      task.set_kind(v1::TASK_KIND_ABORT);
      task.set_job_id(aborted_job_);
      task.set_reason("the job failed on the server");
      return task;
    }
  }
  if (!job_.has_value()) return task;
  auto it = job_->index.find(party);
  if (it == job_->index.end()) return task;
  const StoredParty& p = job_->stored.parties[it->second];
  const std::string& id = job_->stored.spec.job_id();
  switch (job_->stored.state) {
    case v1::JOB_STATE_WAITING:
      if (p.replied) break;
      if (job_->psi.has_value()) {
        // Every roster party accepted and the alignment is open.
        task.set_kind(v1::TASK_KIND_ALIGN);
        task.set_job_id(id);
        *task.mutable_spec() = job_->stored.spec;
        task.set_psi_session(job_->psi->session());
        task.set_psi_index(it->second);
        for (const std::string& name : job_->psi->ring()) task.add_psi_ring(name);
      } else if (!job_->psi_accepted.contains(party)) {
        task.set_kind(v1::TASK_KIND_OFFER);
        task.set_job_id(id);
        *task.mutable_spec() = job_->stored.spec;
      }
      break;
    case v1::JOB_STATE_RUNNING:
      if (!p.accepted || !job_->session.has_value()) break;
      if (job_->session->phase() == fmf::ServerSession::Phase::kRoundOpen) {
        if (!job_->session->HasSubmitted(it->second)) {
          task.set_kind(v1::TASK_KIND_ROUND);
          task.set_job_id(id);
          task.set_round(job_->session->round());
          *task.mutable_spec() = job_->stored.spec;
        }
      } else if (!p.finished) {
        task.set_kind(v1::TASK_KIND_FINISH);
        task.set_job_id(id);
        task.set_round(job_->session->round());
        *task.mutable_spec() = job_->stored.spec;
      }
      break;
    default: break;
  }
  return task;
}

absl::Status JobCoordinator::Heartbeat(const std::string& party) {
  std::unique_lock lock(mu_);
  auto it = last_seen_.find(party);
  if (it == last_seen_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("party '", party, "' is not registered: call Register first"));
  }
  it->second = absl::Now();
  return absl::OkStatus();
}

v1::Task JobCoordinator::GetTask(const std::string& party) {
  std::unique_lock lock(mu_);
  const absl::Time deadline = absl::Now() + options_.poll;
  while (true) {
    last_seen_[party] = absl::Now();
    v1::Task task = ComputeTaskLocked(party);
    if (task.kind() == v1::TASK_KIND_ABORT) abort_pending_[party] = false;
    if (task.kind() != v1::TASK_KIND_IDLE || stop_) return task;
    const absl::Time now = absl::Now();
    if (now >= deadline) return task;
    changed_.wait_for(lock, absl::ToChronoNanoseconds(deadline - now));
  }
}

absl::Status JobCoordinator::ReplyOffer(const std::string& party, const v1::OfferReply& reply) {
  std::unique_lock lock(mu_);
  last_seen_[party] = absl::Now();
  auto idx = RosterIndexLocked(party, reply.job_id());
  if (!idx.ok()) return idx.status();
  if (job_->stored.state != v1::JOB_STATE_WAITING) {
    return absl::FailedPreconditionError("the job is no longer taking offer replies");
  }
  StoredParty& p = job_->stored.parties[*idx];
  if (p.replied) return absl::AlreadyExistsError("offer already answered");
  if (job_->config.align_users && reply.accept()) {
    if (!job_->psi.has_value()) {
      // The first reply of an align_users job: accepted, sizes after ALIGN.
      if (!reply.alignment_pending()) {
        return absl::InvalidArgumentError(
            "job aligns users: accept with alignment_pending, send the sizes after ALIGN");
      }
      job_->psi_accepted.insert(party);
      spdlog::info("party '{}' accepted job '{}' (users to be aligned)", party, reply.job_id());
      changed_.notify_all();
      return absl::OkStatus();
    }
    // The second: the sizes, after the intersection this server relayed.
    const std::optional<int64_t> shared = job_->psi->intersection_size();
    if (!shared.has_value() || reply.global_users() != *shared) {
      return absl::InvalidArgumentError(absl::StrCat(
          "field 'global_users': ", reply.global_users(), " but the aligned users number ",
          shared.has_value() ? absl::StrCat(*shared) : std::string("(not aligned yet)")));
    }
  }
  if (reply.accept()) {
    const bool vertical = job_->config.split == fmf::SplitKind::kVertical;
    // Bounded before anything is stored: a stored reply is what the shared
    // matrix is allocated from, at this start and at every restart.
    if (auto s = CheckOfferReply(reply, vertical, job_->config.dim, options_.limits); !s.ok()) {
      spdlog::warn("party '{}' offer reply for job '{}' refused: {}", party, reply.job_id(),
                   s.message());
      return s;
    }
    if (reply.users() < 1 || reply.items() < 1 || reply.global_users() < reply.users() ||
        reply.global_items() < reply.items()) {
      return absl::InvalidArgumentError("fields 'users/items/global_*': inconsistent data sizes");
    }
    if (vertical && reply.users() != reply.global_users()) {
      return absl::InvalidArgumentError("field 'users': a VFL party holds every user");
    }
    if (!vertical && reply.items() != reply.global_items()) {
      return absl::InvalidArgumentError("field 'items': an HFL party holds every item");
    }
    p.users = reply.users();
    p.items = reply.items();
    p.global_users = reply.global_users();
    p.global_items = reply.global_items();
    p.weight = vertical ? reply.items() : reply.users();
  } else {
    p.refusal = reply.refusal().empty() ? "refused (no reason given)" : reply.refusal();
    spdlog::warn("party '{}' refused job '{}': {}", party, reply.job_id(), p.refusal);
  }
  p.replied = true;
  p.accepted = reply.accept();
  RETURN_IF_ERROR(store_->SaveParty(reply.job_id(), p));
  changed_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<mf::Matrix> JobCoordinator::SharedFor(const std::string& party,
                                                     const std::string& job_id, int32_t round) {
  std::unique_lock lock(mu_);
  last_seen_[party] = absl::Now();
  auto idx = RosterIndexLocked(party, job_id);
  if (!idx.ok()) return idx.status();
  if (!job_->stored.parties[*idx].accepted) {
    return absl::PermissionDeniedError("the party did not accept this job");
  }
  if (job_->stored.state != v1::JOB_STATE_RUNNING || !job_->session.has_value()) {
    return absl::FailedPreconditionError("the job is not running");
  }
  if (round != job_->session->round()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "field 'round': ", round, " is not the current round ", job_->session->round()));
  }
  return job_->session->shared();
}

absl::StatusOr<std::pair<int32_t, int32_t>> JobCoordinator::UploadShape(const std::string& party,
                                                                        const std::string& job_id,
                                                                        int32_t round) {
  std::unique_lock lock(mu_);
  auto idx = RosterIndexLocked(party, job_id);
  if (!idx.ok()) return idx.status();
  if (!job_->stored.parties[*idx].accepted || !job_->session.has_value()) {
    return absl::FailedPreconditionError("no round is open for this party");
  }
  if (round != job_->session->round() ||
      job_->session->phase() != fmf::ServerSession::Phase::kRoundOpen) {
    return absl::FailedPreconditionError(
        absl::StrCat("field 'round': ", round, " is not the open round ", job_->session->round()));
  }
  return std::make_pair(static_cast<int32_t>(job_->session->shared().rows()),
                        static_cast<int32_t>(job_->session->shared().cols()));
}

absl::Status JobCoordinator::SubmitUpdate(const std::string& party, const std::string& job_id,
                                          int32_t round, const mf::Matrix& update) {
  std::unique_lock lock(mu_);
  last_seen_[party] = absl::Now();
  auto idx = RosterIndexLocked(party, job_id);
  if (!idx.ok()) return idx.status();
  if (!job_->session.has_value() || !job_->stored.parties[*idx].accepted) {
    return absl::FailedPreconditionError("no round is open for this party");
  }
  auto s = job_->session->SubmitUpdate(*idx, round, update);
  if (!s.ok()) {
    ++counters_.updates_rejected;
    spdlog::warn("rejected update from '{}' for job '{}' round {}: {}", party, job_id, round,
                 s.message());
    return s;
  }
  job_->stored.parties[*idx].last_round = round;
  changed_.notify_all();
  return absl::OkStatus();
}

absl::Status JobCoordinator::ReportPrivacy(const std::string& party,
                                           const v1::PrivacyReport& report) {
  std::unique_lock lock(mu_);
  last_seen_[party] = absl::Now();
  auto idx = RosterIndexLocked(party, report.job_id());
  if (!idx.ok()) return idx.status();
  if (!std::isfinite(report.epsilon_spent()) && !std::isinf(report.epsilon_spent())) {
    return absl::InvalidArgumentError("field 'epsilon_spent': NaN");
  }
  if (report.epsilon_spent() < 0) return absl::InvalidArgumentError("field 'epsilon_spent': < 0");
  if (std::isnan(report.job_epsilon()) || report.job_epsilon() < 0) {
    return absl::InvalidArgumentError("field 'job_epsilon': must be >= 0 (or +inf)");
  }
  // A report follows the party's upload of `round` or its Stage 3 (round =
  // the final one): never ahead of the job, so junk cannot grow the history.
  if (report.round() < 0 || report.round() > job_->stored.round) {
    return absl::InvalidArgumentError(
        absl::StrFormat("field 'round': %d is not a round of job '%s' so far (0..%d)",
                        report.round(), report.job_id(), job_->stored.round));
  }
  // Metrics are the party's opt-in (policy report_metrics): absent = unknown.
  if (report.has_test_mse() || report.has_test_count()) {
    if (!std::isfinite(report.test_mse()) || report.test_mse() < 0 || report.test_count() < 0) {
      return absl::InvalidArgumentError("fields 'test_mse/test_count': must be finite and >= 0");
    }
  }
  StoredParty& p = job_->stored.parties[*idx];
  p.epsilon = report.epsilon_spent();
  counters_.epsilon_by_party[party] = report.epsilon_spent();
  if (report.finished()) {
    if (report.has_test_mse()) {
      p.test_mse = report.test_mse();
      p.test_count = report.test_count();
    }
    p.finished = true;
  }
  v1::PartyRoundReport history;
  history.set_party(party);
  history.set_job_epsilon(report.job_epsilon());
  history.set_ledger_epsilon(report.epsilon_spent());
  if (report.has_test_mse()) {
    history.set_test_mse(report.test_mse());
    history.set_test_count(report.test_count());
  }
  if (auto s = store_->SaveRoundReport(report.job_id(), report.round(), history); !s.ok()) {
    return s;
  }
  std::vector<v1::PartyRoundReport>& of_round = job_->stored.reports[report.round()];
  std::erase_if(of_round, [&](const v1::PartyRoundReport& r) { return r.party() == party; });
  of_round.push_back(std::move(history));
  RETURN_IF_ERROR(store_->SaveParty(report.job_id(), p));
  changed_.notify_all();
  return absl::OkStatus();
}

CoordinatorCounters JobCoordinator::counters() {
  std::lock_guard lock(mu_);
  return counters_;
}

// ------------------------------------------------------------------ lifecycle

void JobCoordinator::FailJobLocked(const std::string& why) {
  const std::string id = job_->stored.spec.job_id();
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
  for (const StoredParty& p : job_->stored.parties) {
    if (p.accepted) abort_pending_[p.name] = true;
  }
  ++counters_.jobs_failed;
  if (job_->session.has_value()) ++counters_.aggregation_aborts;
  job_.reset();
}

absl::Status JobCoordinator::StartRunningLocked() {
  ActiveJob& job = *job_;
  std::vector<fmf::PartyInfo> infos;
  int32_t shared_rows = -1;
  int32_t accepted = 0;
  const bool vertical = job.config.split == fmf::SplitKind::kVertical;
  for (const StoredParty& p : job.stored.parties) {
    infos.push_back({p.name, p.accepted ? p.weight : 1.0});
    if (!p.accepted) continue;
    ++accepted;
    const int32_t rows = vertical ? p.global_users : p.global_items;
    if (shared_rows >= 0 && rows != shared_rows) {
      return absl::FailedPreconditionError(
          absl::StrCat("parties disagree on the shared dimension (", shared_rows, " vs ", rows,
                       " from '", p.name, "')"));
    }
    shared_rows = rows;
  }
  const int32_t min_parties = std::max(1, job.stored.spec.min_parties());
  if (accepted < min_parties) {
    std::vector<std::string> refusals;
    for (const StoredParty& p : job.stored.parties) {
      if (!p.accepted) {
        refusals.push_back(absl::StrCat(p.name, ": ", p.replied ? p.refusal : "no reply"));
      }
    }
    return absl::FailedPreconditionError(
        absl::StrCat(accepted, " of ", job.stored.parties.size(), " parties accepted, ",
                     min_parties, " needed (", absl::StrJoin(refusals, "; "), ")"));
  }
  // Replies were bounded one by one; the matrix they imply is bounded too.
  if (auto s =
          CheckBound("shared matrix values (rows x dim)", int64_t{shared_rows} * job.config.dim,
                     "max_matrix_values", options_.limits.max_matrix_values);
      !s.ok()) {
    return s;
  }
  // Same derivation as the simulator (root seed -> "server"), so a server
  // started with the seed of `fedmf train` starts from the same matrix.
  random::Csprng server_rng = random::Csprng::FromOptionalSeed(options_.seed).Fork("server");
  auto session = fmf::ServerSession::Create(job.config, shared_rows, infos, server_rng);
  if (!session.ok()) return session.status();
  if (auto s = store_->StartRunning(job.stored.spec.job_id(), session->shared()); !s.ok()) {
    return s;
  }
  job.session.emplace(std::move(*session));
  job.stored.state = v1::JOB_STATE_RUNNING;
  job.stored.round = 0;
  job.stored.shared = job.session->shared();
  spdlog::info("job '{}' running with {} parties, shared matrix {}x{}", job.stored.spec.job_id(),
               accepted, shared_rows, job.config.dim);
  return absl::OkStatus();
}

bool JobCoordinator::AdvanceLocked(std::unique_lock<std::mutex>&) {
  if (!job_.has_value()) {
    if (auto s = LoadActiveLocked(); !s.ok()) {
      spdlog::error("cannot load the next job: {}", s.message());
      return false;
    }
    if (job_.has_value()) {
      job_->phase_started = absl::Now();
      return true;
    }
    return false;
  }
  ActiveJob& job = *job_;
  const absl::Time now = absl::Now();
  if (job.stored.state == v1::JOB_STATE_WAITING && job.config.align_users) {
    bool waiting = false;
    if (AdvanceAlignmentLocked(now, &waiting)) return true;
    if (waiting) return false;
  }
  if (job.stored.state == v1::JOB_STATE_WAITING) {
    bool all_replied = true;
    for (const StoredParty& p : job.stored.parties) all_replied &= p.replied;
    if (!all_replied && now - job.phase_started < options_.offer_deadline) return false;
    if (auto s = StartRunningLocked(); !s.ok()) {
      FailJobLocked(std::string(s.message()));
      return true;
    }
    job.phase_started = now;
    return true;
  }
  if (job.stored.state != v1::JOB_STATE_RUNNING || !job.session.has_value()) return false;
  fmf::ServerSession& session = *job.session;
  if (session.phase() == fmf::ServerSession::Phase::kRoundOpen) {
    bool waiting_for_live = false;
    for (size_t i = 0; i < job.stored.parties.size(); ++i) {
      const StoredParty& p = job.stored.parties[i];
      if (p.accepted && !session.HasSubmitted(static_cast<int32_t>(i)) &&
          AwaitedLocked(p.name, now)) {
        waiting_for_live = true;
      }
    }
    const bool deadline = now - job.phase_started >= job.round_deadline;
    bool any = false;
    for (size_t i = 0; i < job.stored.parties.size(); ++i) {
      any |= session.HasSubmitted(static_cast<int32_t>(i));
    }
    if (!any) {
      if (deadline) {
        FailJobLocked(
            absl::StrCat("round ", session.round(), ": no party answered before the deadline"));
        return true;
      }
      return false;
    }
    if (waiting_for_live && !deadline) return false;
    const double seconds = absl::ToDoubleSeconds(now - job.phase_started);
    auto summary = session.CloseRound();
    if (!summary.ok()) {
      FailJobLocked(std::string(summary.status().message()));
      return true;
    }
    v1::RoundRecord record;
    record.set_round(summary->round);
    record.set_seconds(seconds);
    for (int32_t k : summary->contributors) record.add_contributors(job.stored.parties[k].name);
    for (int32_t k : summary->missing) {
      if (job.stored.parties[k].accepted) record.add_missing(job.stored.parties[k].name);
    }
    const int32_t min_parties = std::max(1, job.stored.spec.min_parties());
    if (static_cast<int32_t>(summary->contributors.size()) < min_parties) {
      FailJobLocked(absl::StrCat("round ", summary->round, ": only ", summary->contributors.size(),
                                 " parties answered, ", min_parties, " needed"));
      return true;
    }
    if (auto s = store_->CommitRound(job.stored.spec.job_id(), record, session.shared()); !s.ok()) {
      // Durability is the contract: without the commit we cannot go on.
      spdlog::critical("cannot persist round {}: {}", summary->round, s.message());
      FailJobLocked(absl::StrCat("storage failure: ", s.message()));
      return true;
    }
    job.stored.rounds.push_back(record);
    job.stored.round = session.round();
    job.stored.shared = session.shared();
    ++counters_.rounds_completed;
    counters_.dropouts += record.missing_size();
    if (options_.on_round) options_.on_round(record);
    spdlog::info(
        "job '{}' round {}/{} closed in {:.2f}s: {} contributors{}", job.stored.spec.job_id(),
        summary->round + 1, session.total_rounds(), seconds, record.contributors_size(),
        record.missing_size() > 0 ? absl::StrCat(", missing ", absl::StrJoin(record.missing(), ","))
                                  : std::string());
    job.phase_started = now;
    return true;
  }
  // Stage 3: wait for the live acceptors' final reports.
  bool waiting = false;
  for (const StoredParty& p : job.stored.parties) {
    if (p.accepted && !p.finished && AwaitedLocked(p.name, now)) waiting = true;
  }
  if (waiting && now - job.phase_started < options_.finish_deadline) return false;
  if (absl::Status s = store_->SetJobState(job.stored.spec.job_id(), v1::JOB_STATE_FINISHED);
      !s.ok()) {
    spdlog::error(
        "job '{}': could not store its FINISHED state ({}); a restart will run its "
        "finish phase again",
        job.stored.spec.job_id(), s.message());
  }
  spdlog::info("job '{}' finished", job.stored.spec.job_id());
  ++counters_.jobs_finished;
  job_.reset();
  return true;
}

bool JobCoordinator::AdvanceAlignmentLocked(absl::Time now, bool* waiting) {
  ActiveJob& job = *job_;
  *waiting = true;
  // A refusal ends it: the intersection is of every roster party's users.
  for (const StoredParty& p : job.stored.parties) {
    if (p.replied && !p.accepted) {
      FailJobLocked(absl::StrCat("align_users needs every roster party; '", p.name,
                                 "' refused: ", p.refusal));
      return true;
    }
  }
  if (!job.psi.has_value()) {
    if (job.psi_accepted.size() < job.stored.parties.size()) {
      if (now - job.phase_started < options_.offer_deadline) return false;
      std::vector<std::string> silent;
      for (const StoredParty& p : job.stored.parties) {
        if (!job.psi_accepted.contains(p.name)) silent.push_back(p.name);
      }
      FailJobLocked(absl::StrCat("align_users needs every roster party; no acceptance from ",
                                 absl::StrJoin(silent, ", "), " before the offer deadline"));
      return true;
    }
    std::vector<std::string> ring;
    for (const StoredParty& p : job.stored.parties) ring.push_back(p.name);
    // A fresh session per run: signatures of an interrupted run cannot be
    // replayed into this one.
    random::Csprng rng = random::Csprng::FromOsEntropy();
    const std::string session =
        absl::StrCat(job.stored.spec.job_id(), "/psi-", absl::Hex(rng.NextU64(), absl::kZeroPad16));
    auto psi = PsiAlignment::Create(std::move(ring), session);
    if (!psi.ok()) {
      FailJobLocked(std::string(psi.status().message()));
      return true;
    }
    job.psi.emplace(std::move(*psi));
    job.phase_started = now;
    spdlog::info("job '{}': aligning the users of {} parties by private set intersection",
                 job.stored.spec.job_id(), job.stored.parties.size());
    changed_.notify_all();
    return true;
  }
  bool all_replied = true;
  for (const StoredParty& p : job.stored.parties) all_replied &= p.replied;
  if (all_replied) {
    *waiting = false;  // every party sent its sizes: start as any job
    spdlog::info("job '{}': users aligned; sets of {} users, {} shared", job.stored.spec.job_id(),
                 absl::StrJoin(job.psi->set_sizes(), ", "),
                 job.psi->intersection_size().value_or(0));
    return false;
  }
  if (now - job.phase_started >= job.round_deadline) {
    FailJobLocked(absl::StrCat("the private set intersection did not finish within ",
                               absl::FormatDuration(job.round_deadline),
                               " (round_deadline_seconds)"));
    return true;
  }
  return false;
}

absl::Status JobCoordinator::PsiSend(const std::string& party, const v1::PsiSendRequest& request) {
  std::unique_lock lock(mu_);
  last_seen_[party] = absl::Now();
  auto idx = RosterIndexLocked(party, request.job_id());
  if (!idx.ok()) return idx.status();
  if (!job_->psi.has_value() || job_->stored.state != v1::JOB_STATE_WAITING) {
    return absl::FailedPreconditionError(
        absl::StrCat("job '", request.job_id(), "' is not aligning users"));
  }
  RETURN_IF_ERROR(job_->psi->Send(*idx, request));
  changed_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<v1::PsiFetchResponse> JobCoordinator::PsiFetch(const std::string& party,
                                                              const v1::PsiFetchRequest& request) {
  std::unique_lock lock(mu_);
  const absl::Time deadline = absl::Now() + options_.poll;
  while (true) {
    last_seen_[party] = absl::Now();
    auto idx = RosterIndexLocked(party, request.job_id());
    if (!idx.ok()) return idx.status();
    if (!job_->psi.has_value() || job_->psi->session() != request.session()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job '", request.job_id(), "' has no alignment under session '", request.session(), "'"));
    }
    v1::PsiFetchResponse response = job_->psi->Fetch(*idx);
    if (!PsiAlignment::Empty(response) || stop_) return response;
    const absl::Time now = absl::Now();
    if (now >= deadline) return response;
    changed_.wait_for(lock, absl::ToChronoNanoseconds(deadline - now));
  }
}

void JobCoordinator::RunLoop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    bool changed = false;
    try {
      changed = AdvanceLocked(lock);
    } catch (const std::bad_alloc&) {
      // An allocation failure fails the job it happened in, not the daemon.
      if (job_.has_value()) FailJobLocked("the server ran out of memory for this job");
      changed = true;
    } catch (const std::length_error& e) {
      if (job_.has_value()) {
        FailJobLocked(absl::StrCat("the server cannot allocate this job's state: ", e.what()));
      }
      changed = true;
    }
    if (changed) {
      changed_.notify_all();
      continue;
    }
    // Re-check on any event, and periodically for deadlines and liveness.
    changed_.wait_for(lock, std::chrono::milliseconds(200));
  }
}

}  // namespace fedmf::server
