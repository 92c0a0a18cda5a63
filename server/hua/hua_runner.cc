#include "server/hua/hua_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/wire/hua_codec.h"
#include "common/log/log.h"

namespace fedmf::server {
namespace {

v1::JobState WireState(HuaJobState s) {
  switch (s) {
    case HuaJobState::kRegistering: return v1::JOB_STATE_WAITING;
    case HuaJobState::kRunning:
    case HuaJobState::kFinishing: return v1::JOB_STATE_RUNNING;
    case HuaJobState::kFinished: return v1::JOB_STATE_FINISHED;
    case HuaJobState::kFailed: return v1::JOB_STATE_FAILED;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

bool Terminal(HuaJobState s) { return s == HuaJobState::kFinished || s == HuaJobState::kFailed; }

absl::Duration SecondsOr(double s, absl::Duration fallback) {
  return s > 0 ? absl::Seconds(s) : fallback;
}

}  // namespace

HuaRunner::HuaRunner(HuaRunnerOptions options, AggregatorLinkFactory links)
    : options_(options),
      links_(std::move(links)),
      loop_(
          &mu_, {.tick = options_.tick, .poll = options_.poll, .clock = options_.clock},
          [this](absl::Time now) {
            mu_.AssertHeld();
            return StepLocked(now);
          },
          [this](const std::string& why) {
            mu_.AssertHeld();
            if (Entry* e = ActiveLocked(); e != nullptr) e->job->Fail(why);
          }) {}

HuaRunner::~HuaRunner() { Stop(); }

absl::Status HuaRunner::Start() {
  loop_.Start();
  return absl::OkStatus();
}

void HuaRunner::Stop() { loop_.Stop(); }

absl::StatusOr<std::string> HuaRunner::SubmitJob(const v1::JobSpec& in,
                                                 const std::string& /*submitter*/) {
  v1::JobSpec spec = in;
  ASSIGN_OR_RETURN(auto job, net::HuaJobFromSpec(spec));
  if (spec.hua().aggregator().empty()) {
    return absl::InvalidArgumentError("field 'hua.aggregator': the aggregator's address");
  }
  absl::MutexLock lock(&mu_);
  if (spec.job_id().empty()) spec.set_job_id(absl::StrCat("hua-", next_id_++));
  if (jobs_.count(spec.job_id())) {
    return absl::AlreadyExistsError(absl::StrCat("job '", spec.job_id(), "' exists"));
  }
  HuaS3Config c;
  c.job_id = spec.job_id();
  c.params = job.params;
  c.range = job.range;
  c.num_items = job.num_items;
  if (job.has_seed) c.seed = job.seed;
  for (const v1::DeviceGrant& g : spec.hua().grants()) {
    c.grants.push_back(
        {g.host(), static_cast<int32_t>(g.first_device()), static_cast<int32_t>(g.count())});
  }
  c.expected_users = spec.hua().expected_users();
  c.join_deadline = SecondsOr(spec.hua().join_deadline_seconds(), c.join_deadline);
  c.round_deadline = SecondsOr(spec.round_deadline_seconds(), c.round_deadline);
  c.liveness = options_.liveness;
  ASSIGN_OR_RETURN(auto link, links_(spec.hua().aggregator()));
  // Deadlines (join) count from submission.
  absl::StatusOr<std::unique_ptr<HuaS3Job>> machine =
      LifecycleLoop::GuardAllocation("creating this Hua job (lower its sizes or limits.*)",
                                     [&] { return HuaS3Job::Create(std::move(c), loop_.Now()); });
  if (!machine.ok()) return machine.status();
  const std::string id = spec.job_id();
  jobs_[id] = Entry{std::move(spec), std::move(*machine), std::move(link)};
  queue_.push_back(id);
  spdlog::info("hua job '{}' submitted ({} iterations, epsilon {}, K = {})", id,
               job.params.iterations, job.params.epsilon, job.params.max_online);
  loop_.Notify();
  return id;
}

absl::StatusOr<std::vector<std::string>> HuaRunner::JobIds() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const auto& [id, entry] : jobs_) ids.push_back(id);
  return ids;
}

absl::StatusOr<HuaRunner::Entry*> HuaRunner::FindLocked(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no Hua job '", job_id, "'"));
  return &it->second;
}

HuaRunner::Entry* HuaRunner::ActiveLocked() {
  while (!queue_.empty()) {
    Entry& e = jobs_.at(queue_.front());
    if (!Terminal(e.job->state())) return &e;
    queue_.pop_front();
  }
  return nullptr;
}

absl::StatusOr<v1::JobStatus> HuaRunner::GetJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto e, FindLocked(job_id));
  const HuaS3Job& j = *(e)->job;
  v1::JobStatus st;
  *st.mutable_spec() = (e)->spec;
  st.set_state(WireState(j.state()));
  st.set_round(j.iteration());
  st.set_error(j.error());
  v1::HuaStatus* h = st.mutable_hua();
  h->set_registered_users(j.registered_users());
  h->set_uninitialized_items(j.uninitialized_items());
  h->set_init_rounds(j.init_rounds());
  for (const HuaIterationLog& l : j.log()) {
    v1::HuaIterationRecord* r = h->add_iterations();
    r->set_iteration(l.iteration);
    r->set_users(l.users);
    r->set_items_updated(l.stats.items_updated);
    r->set_passes(l.stats.passes);
    r->set_dropped_users(l.stats.dropped_users);
    r->set_items_abandoned(l.stats.items_abandoned);
    r->set_seconds(l.seconds);
  }
  h->set_test_count(j.test_count());
  h->set_test_mse(j.test_mse());
  h->set_test_mae(j.test_mae());
  double worst = 0;
  for (const HuaUserSpend& s : j.UserSpend()) {
    v1::HuaUserPrivacy* u = h->add_users();
    u->set_user(s.user);
    u->set_releases(s.releases);
    u->set_epsilon(s.epsilon);
    worst = std::max(worst, s.epsilon);
  }
  h->set_epsilon(worst);
  return st;
}

v1::HuaJobOffer HuaRunner::Offer(const std::string& host) {
  absl::MutexLock lock(&mu_);
  v1::HuaJobOffer offer;
  offer.set_poll_seconds(absl::ToDoubleSeconds(options_.poll));
  Entry* e = ActiveLocked();
  if (e == nullptr) return offer;
  const auto& grants = e->spec.hua().grants();
  if (std::none_of(grants.begin(), grants.end(),
                   [&](const v1::DeviceGrant& g) { return g.host() == host; })) {
    return offer;
  }
  offer.set_active(true);
  *offer.mutable_spec() = e->spec;
  return offer;
}

absl::StatusOr<int32_t> HuaRunner::Register(const std::string& host, const std::string& job_id,
                                            const std::vector<hua::UserHello>& users) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto e, FindLocked(job_id));
  auto n = (e)->job->Register(host, users, loop_.Now());
  loop_.Notify();
  return n;
}

absl::StatusOr<v1::HuaTasks> HuaRunner::Poll(const std::string& host, const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = loop_.PollDeadline();
  while (true) {
    ASSIGN_OR_RETURN(auto e, FindLocked(job_id));
    HuaHostTasks t = (e)->job->TasksFor(host, loop_.Now());
    if (t.kind != HuaHostTasks::kIdle || loop_.stopping() || absl::Now() >= deadline) {
      v1::HuaTasks out;
      out.set_job_id(job_id);
      out.set_phase(net::ToWire(t.phase));
      out.set_round(t.round);
      out.set_pass(t.pass);
      switch (t.kind) {
        case HuaHostTasks::kIdle: out.set_kind(v1::HUA_TASK_KIND_IDLE); break;
        case HuaHostTasks::kInit: out.set_kind(v1::HUA_TASK_KIND_INIT); break;
        case HuaHostTasks::kIteration: out.set_kind(v1::HUA_TASK_KIND_ITERATION); break;
        case HuaHostTasks::kFinish: out.set_kind(v1::HUA_TASK_KIND_FINISH); break;
        case HuaHostTasks::kAbort: out.set_kind(v1::HUA_TASK_KIND_ABORT); break;
      }
      for (const hua::InitRequest& r : t.init) *out.add_init() = net::ToWire(r);
      for (const hua::IterationRequest& r : t.iteration) *out.add_iteration() = net::ToWire(r);
      out.set_reason(t.reason);
      return out;
    }
    loop_.Park(deadline);
  }
}

absl::Status HuaRunner::Done(const std::string& host, const v1::HuaDoneRequest& req) {
  ASSIGN_OR_RETURN(auto phase, net::PhaseFromWire(req.phase()));
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto e, FindLocked(req.job_id()));
  std::vector<int32_t> users(req.users().begin(), req.users().end());
  auto s = (e)->job->MarkDone(host, phase, req.round(), req.pass(), users);
  loop_.Notify();
  return s;
}

absl::StatusOr<v1::HuaFinalItems> HuaRunner::FinalItems(const std::string& host,
                                                        const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto e, FindLocked(job_id));
  ASSIGN_OR_RETURN(auto v, (e)->job->FinalItems(host));
  v1::HuaFinalItems out;
  out.set_job_id(job_id);
  out.set_rows(static_cast<int32_t>(v.rows()));
  out.set_cols(static_cast<int32_t>(v.cols()));
  for (int32_t r = 0; r < v.rows(); ++r) {
    for (int32_t c = 0; c < v.cols(); ++c) out.add_values((v)(r, c));
  }
  return out;
}

absl::Status HuaRunner::ReportResult(const std::string& host, const v1::HuaResultReport& r) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto e, FindLocked(r.job_id()));
  auto s = (e)->job->ReportResult(host, r.test_count(), r.test_mse(), r.test_mae(), loop_.Now());
  loop_.Notify();
  return s;
}

bool HuaRunner::StepLocked(absl::Time now) {
  Entry* e = ActiveLocked();
  if (e == nullptr) return false;
  HuaS3Job* job = e->job.get();
  AggregatorLink* link = e->link.get();
  const std::string id = job->config().job_id;
  const int32_t dim = job->config().params.dim;
  const HuaAction a = job->NextAction(now);
  if (a.kind == HuaAction::kNone) {
    if (Terminal(job->state())) {
      spdlog::info("hua job '{}' {}{}", id, HuaJobStateName(job->state()),
                   job->error().empty() ? "" : ": " + job->error());
      if (job->state() == HuaJobState::kFailed) {
        // The job has failed already; a failure to tell the aggregator is
        // worth an operator's look (it keeps the job's state until told),
        // not a second failure.
        if (absl::Status s = link->EndJob(id); !s.ok()) {
          spdlog::warn("hua job '{}': telling the aggregator to end it failed: {}", id,
                       s.message());
        }
      }
      loop_.Notify();
      return true;
    }
    return false;
  }
  // The aggregator is called without the lock: hosts keep polling meanwhile
  // (they see the round only once Begun() made it visible).
  mu_.Unlock();
  absl::Status s;
  absl::StatusOr<hua::AggregateForward> forward;
  try {
    switch (a.kind) {
      case HuaAction::kBegin: s = link->Begin(id, dim, a.plan, a.hosts); break;
      case HuaAction::kFlush:
        forward = link->Flush(id, dim, a.phase, a.round, a.pass);
        s = forward.status();
        break;
      case HuaAction::kEndJob: s = link->EndJob(id); break;
      case HuaAction::kNone: break;
    }
  } catch (...) {
    mu_.Lock();  // the caller (loop_) handles it holding the lock
    throw;
  }
  mu_.Lock();
  if (!s.ok()) {
    spdlog::warn("hua job '{}': aggregator: {} (retrying)", id, s.message());
    loop_.Park(absl::Now() + options_.aggregator_retry);  // or sooner, on news
    return false;
  }
  switch (a.kind) {
    case HuaAction::kBegin: job->Begun(); break;
    case HuaAction::kFlush:
      if (auto f = job->Flushed(*forward, loop_.Now()); !f.ok()) {
        spdlog::error("hua job '{}' failed: {}", id, f.message());
      } else if (a.phase == hua::Phase::kIteration && !job->log().empty() &&
                 job->log().back().iteration == a.round) {
        const HuaIterationLog& l = job->log().back();
        spdlog::info("hua job '{}': iteration {} done: {} users, {} items, {} pass(es)", id,
                     l.iteration, l.users, l.stats.items_updated, l.stats.passes);
      }
      break;
    case HuaAction::kEndJob: job->EndedAtAggregator(loop_.Now()); break;
    case HuaAction::kNone: break;
  }
  loop_.Notify();
  return true;
}

}  // namespace fedmf::server
