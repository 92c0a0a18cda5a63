#include "server/hua/hua_s3_job.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/hua/streams.h"
#include "common/random/csprng.h"

namespace fedmf::server {

const char* HuaJobStateName(HuaJobState s) {
  switch (s) {
    case HuaJobState::kRegistering: return "registering";
    case HuaJobState::kRunning: return "running";
    case HuaJobState::kFinishing: return "finishing";
    case HuaJobState::kFinished: return "finished";
    case HuaJobState::kFailed: return "failed";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<HuaS3Job>> HuaS3Job::Create(HuaS3Config config, absl::Time now) {
  config.params.scenario = hua::Scenario::kDynamic;
  RETURN_IF_ERROR(hua::ValidateHuaParams(config.params));
  if (config.grants.empty()) return absl::InvalidArgumentError("a Hua job needs device grants");
  ASSIGN_OR_RETURN(auto codec, hua::ZpCodec::Create(config.params.zp));
  ASSIGN_OR_RETURN(hua::HuaPrivacy privacy, hua::PlanPrivacy(config.params, config.range));
  std::unique_ptr<HuaS3Job> job(new HuaS3Job(std::move(config), codec, now));
  job->privacy_ = privacy;
  // The seed exists for tests (reproducing the simulator); a real job draws
  // its masks and H_j from the OS CSPRNG.
  const random::Csprng root = job->config_.seed ? random::Csprng::FromSeed(*job->config_.seed)
                                                : random::Csprng::FromOsEntropy();
  auto rec =
      hua::Recommender::Create(job->config_.params, job->config_.num_items, job->config_.range,
                               &job->codec_, hua::RecommenderStream(root));
  if (!rec.ok()) return rec.status();
  job->recommender_.emplace(std::move(*rec));
  return job;
}

HuaS3Job::HuaS3Job(HuaS3Config config, hua::ZpCodec codec, absl::Time now)
    : config_(std::move(config)), codec_(codec), created_(now) {}

std::vector<HuaUserSpend> HuaS3Job::UserSpend() const {
  std::vector<HuaUserSpend> out;
  std::map<int32_t, double> by_releases;  // few distinct counts: one accountant run each
  for (int32_t user : recommender_->registered_users()) {
    const int32_t n = recommender_->releases(user);
    auto it = by_releases.find(n);
    if (it == by_releases.end()) {
      const absl::StatusOr<double> eps = hua::UserEpsilon(privacy_, n);
      it = by_releases.emplace(n, eps.ok() ? *eps : INFINITY).first;
    }
    out.push_back({user, n, it->second});
  }
  return out;
}

double HuaS3Job::epsilon() const {
  double worst = 0;
  for (const HuaUserSpend& s : UserSpend()) worst = std::max(worst, s.epsilon);
  return worst;
}

const std::string* HuaS3Job::HostOf(int32_t user) const {
  auto it = user_host_.find(user);
  return it == user_host_.end() ? nullptr : &it->second;
}

bool HuaS3Job::Connected(int32_t user, absl::Time now) const {
  const std::string* host = HostOf(user);
  if (host == nullptr) return false;
  auto it = last_seen_.find(*host);
  return it != last_seen_.end() && now - it->second <= config_.liveness;
}

std::vector<int32_t> HuaS3Job::ConnectedOnly(const std::vector<int32_t>& users,
                                             absl::Time now) const {
  std::vector<int32_t> out;
  for (int32_t i : users) {
    if (Connected(i, now)) out.push_back(i);
  }
  return out;
}

absl::StatusOr<int32_t> HuaS3Job::Register(const std::string& host,
                                           const std::vector<hua::UserHello>& users,
                                           absl::Time now) {
  last_seen_[host] = now;
  if (state_ != HuaJobState::kRegistering) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", config_.job_id, "' is ", HuaJobStateName(state_),
        ": users register before the first iteration (the rated item sets are public)"));
  }
  // Validate the whole batch before registering any of it.
  std::set<int32_t> seen;
  for (const hua::UserHello& u : users) {
    const bool granted =
        std::any_of(config_.grants.begin(), config_.grants.end(), [&](const HuaGrant& g) {
          return g.host == host && u.user >= g.first_user && u.user - g.first_user < g.count;
        });
    if (!granted) {
      return absl::PermissionDeniedError(absl::StrCat("host '", host, "' is not granted user ",
                                                      u.user, " in job '", config_.job_id, "'"));
    }
    if (!seen.insert(u.user).second || user_host_.count(u.user)) {
      return absl::AlreadyExistsError(absl::StrCat("user ", u.user, " registered twice"));
    }
    if (u.items.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("user ", u.user, ": no rated items"));
    }
    for (size_t k = 0; k < u.items.size(); ++k) {
      if (u.items[k] < 0 || u.items[k] >= config_.num_items ||
          (k > 0 && u.items[k] <= u.items[k - 1])) {
        return absl::InvalidArgumentError(
            absl::StrCat("user ", u.user, ": items must be sorted, distinct and in [0, ",
                         config_.num_items, ")"));
      }
    }
  }
  for (const hua::UserHello& u : users) {
    RETURN_IF_ERROR(recommender_->Register(u));
    user_host_[u.user] = host;
  }
  int32_t n = 0;
  for (const auto& [u, h] : user_host_) n += h == host;
  return n;
}

absl::Status HuaS3Job::Start() {
  std::vector<int32_t> users;
  for (const auto& [u, h] : user_host_) users.push_back(u);
  const hua::HuaParams& p = config_.params;
  const double initial = p.initial_online >= 0 ? p.initial_online
                         : p.join_prob + p.leave_prob > 0
                             ? p.join_prob / (p.join_prob + p.leave_prob)
                             : 1.0;
  // The same stream as the protocol driver's, so a seeded job matches it.
  const random::Csprng root =
      config_.seed ? random::Csprng::FromSeed(*config_.seed) : random::Csprng::FromOsEntropy();
  pool_.emplace(std::move(users), initial, p.join_prob, p.leave_prob,
                hua::DynamicsStream(root).Fork("pool"));
  state_ = HuaJobState::kRunning;
  stage_ = Stage::kStartIteration;
  return absl::OkStatus();
}

HuaHostTasks HuaS3Job::TasksFor(const std::string& host, absl::Time now) {
  last_seen_[host] = now;
  HuaHostTasks t;
  if (state_ == HuaJobState::kFailed) {
    t.kind = HuaHostTasks::kAbort;
    t.reason = error_;
    return t;
  }
  if (state_ == HuaJobState::kFinishing || state_ == HuaJobState::kFinished) {
    if (!results_.count(host)) t.kind = HuaHostTasks::kFinish;
    return t;
  }
  if (!open_.has_value() || !open_->begun) return t;
  t.phase = open_->phase;
  t.round = open_->round;
  t.pass = open_->pass;
  if (open_->phase == hua::Phase::kInit) {
    for (const auto& [u, req] : open_->init) {
      if (!open_->done.count(u) && *HostOf(u) == host) t.init.push_back(req);
    }
    if (!t.init.empty()) t.kind = HuaHostTasks::kInit;
  } else {
    for (const auto& [u, req] : open_->iteration) {
      if (!open_->done.count(u) && *HostOf(u) == host) t.iteration.push_back(req);
    }
    if (!t.iteration.empty()) t.kind = HuaHostTasks::kIteration;
  }
  return t;
}

absl::Status HuaS3Job::MarkDone(const std::string& host, hua::Phase phase, int32_t round,
                                int32_t pass, const std::vector<int32_t>& users) {
  if (!open_.has_value() || open_->phase != phase || open_->round != round || open_->pass != pass) {
    return absl::FailedPreconditionError(
        absl::StrCat("round ", round, " pass ", pass, " is not open (stale or replayed)"));
  }
  for (int32_t u : users) {
    const std::string* h = HostOf(u);
    if (h == nullptr || *h != host || !open_->planned.count(u)) {
      return absl::PermissionDeniedError(
          absl::StrCat("host '", host, "' has no request for user ", u, " in this round"));
    }
  }
  open_->done.insert(users.begin(), users.end());
  return absl::OkStatus();
}

HuaAction HuaS3Job::BeginAction() const {
  HuaAction a;
  a.kind = HuaAction::kBegin;
  a.plan = open_->plan;
  for (int32_t u : open_->planned) a.hosts[u] = *HostOf(u);
  return a;
}

void HuaS3Job::OpenIterationPass(hua::Round round, absl::Time now) {
  OpenRound r;
  r.phase = hua::Phase::kIteration;
  r.round = round.plan.round;
  r.pass = round.plan.pass;
  for (hua::IterationRequest& req : round.requests) {
    r.planned.insert(req.user);
    r.iteration.emplace(req.user, std::move(req));
  }
  r.plan = std::move(round.plan);
  r.started = now;
  open_ = std::move(r);
}

HuaAction HuaS3Job::BuildNext(absl::Time now) {
  const hua::HuaParams& p = config_.params;
  while (true) {
    switch (stage_) {
      case Stage::kStartIteration: {
        const int32_t t = recommender_->iteration() + 1;
        if (t > p.iterations) {
          state_ = HuaJobState::kFinishing;
          finishing_since_ = now;
          HuaAction a;
          a.kind = HuaAction::kEndJob;
          return a;
        }
        if (t > 1) pool_->Step();  // users join and leave between iterations
        iteration_started_ = now;
        stage_ = Stage::kInit;
        break;
      }
      case Stage::kInit: {
        stage_ = Stage::kIterate;
        if (recommender_->uninitialized_items() == 0) break;
        auto round = recommender_->StartInit(ConnectedOnly(pool_->Online(), now));
        if (!round.ok()) {
          Fail(std::string(round.status().message()));
          return {};
        }
        if (round->requests.empty()) break;
        ++init_rounds_;
        OpenRound r;
        r.phase = hua::Phase::kInit;
        r.round = round->plan.round;
        for (hua::InitRequest& req : round->requests) {
          r.planned.insert(req.user);
          r.init.emplace(req.user, std::move(req));
        }
        r.plan = std::move(round->plan);
        r.started = now;
        open_ = std::move(r);
        return BeginAction();
      }
      case Stage::kIterate: {
        iteration_users_ = ConnectedOnly(pool_->Select(p.max_online), now);
        auto round = recommender_->StartIteration(iteration_users_);
        if (!round.ok()) {
          Fail(std::string(round.status().message()));
          return {};
        }
        if (round->requests.empty()) {
          // Nobody online (or nothing initialized yet): V stays as it is.
          auto stats = recommender_->FinishIteration();
          if (!stats.ok()) {
            Fail(std::string(stats.status().message()));
            return {};
          }
          log_.push_back(
              {stats->iteration, 0, *stats, absl::ToDoubleSeconds(now - iteration_started_)});
          stage_ = Stage::kStartIteration;
          break;
        }
        OpenIterationPass(std::move(*round), now);
        return BeginAction();
      }
    }
  }
}

HuaAction HuaS3Job::NextAction(absl::Time now) {
  switch (state_) {
    case HuaJobState::kRegistering: {
      const int32_t n = registered_users();
      const bool enough = config_.expected_users > 0 && n >= config_.expected_users;
      const bool late = now - created_ >= config_.join_deadline && n > 0;
      if (!enough && !late) {
        if (now - created_ >= config_.join_deadline) Fail("no user registered before the deadline");
        return {};
      }
      if (auto s = Start(); !s.ok()) {
        Fail(std::string(s.message()));
        return {};
      }
      return BuildNext(now);
    }
    case HuaJobState::kRunning: {
      if (!open_.has_value()) return BuildNext(now);
      if (!open_->begun) return BeginAction();  // the aggregator did not take it yet: retry
      const bool all = open_->done.size() == open_->planned.size();
      if (all || now - open_->started >= config_.round_deadline) {
        HuaAction a;
        a.kind = HuaAction::kFlush;
        a.phase = open_->phase;
        a.round = open_->round;
        a.pass = open_->pass;
        return a;
      }
      return {};
    }
    case HuaJobState::kFinishing: {
      if (!ended_at_aggregator_) {
        HuaAction a;
        a.kind = HuaAction::kEndJob;
        return a;
      }
      std::set<std::string> hosts;
      for (const auto& [u, h] : user_host_) hosts.insert(h);
      // A host that vanished (silent longer than the liveness window) is not waited for.
      const bool all = std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) {
        auto seen = last_seen_.find(h);
        return results_.count(h) > 0 || seen == last_seen_.end() ||
               now - seen->second > config_.liveness;
      });
      if (all || now - finishing_since_ >= config_.finish_deadline) {
        state_ = HuaJobState::kFinished;
      }
      return {};
    }
    default: return {};
  }
}

void HuaS3Job::Begun() {
  if (open_.has_value()) open_->begun = true;
}

absl::Status HuaS3Job::Flushed(const hua::AggregateForward& f, absl::Time now) {
  if (!open_.has_value() || f.phase != open_->phase || f.round != open_->round ||
      f.pass != open_->pass) {
    return absl::InvalidArgumentError("the aggregator forwarded sums of another round");
  }
  // Who did not report is offline now (it may join again later).
  for (int32_t u : f.missing_users) {
    if (!open_->planned.count(u)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the aggregator names user ", u, " who was not planned"));
    }
    pool_->Disconnect(u);
  }
  if (f.phase == hua::Phase::kInit) {
    open_.reset();
    if (auto s = recommender_->FinishInit(f); !s.ok()) {
      Fail(std::string(s.message()));
      return s;
    }
    return absl::OkStatus();
  }
  auto repair = recommender_->AcceptForward(f);
  if (!repair.ok()) {
    Fail(std::string(repair.status().message()));
    return repair.status();
  }
  if (!repair->requests.empty()) {
    OpenIterationPass(std::move(*repair), now);
    return absl::OkStatus();
  }
  open_.reset();
  auto stats = recommender_->FinishIteration();
  if (!stats.ok()) {
    Fail(std::string(stats.status().message()));
    return stats.status();
  }
  log_.push_back({stats->iteration, static_cast<int32_t>(iteration_users_.size()), *stats,
                  absl::ToDoubleSeconds(now - iteration_started_)});
  stage_ = Stage::kStartIteration;
  return absl::OkStatus();
}

void HuaS3Job::EndedAtAggregator(absl::Time) { ended_at_aggregator_ = true; }

void HuaS3Job::Fail(const std::string& why) {
  if (state_ == HuaJobState::kFailed || state_ == HuaJobState::kFinished) return;
  state_ = HuaJobState::kFailed;
  error_ = why;
  open_.reset();
}

absl::StatusOr<mf::Matrix> HuaS3Job::FinalItems(const std::string& host) const {
  if (state_ != HuaJobState::kFinishing && state_ != HuaJobState::kFinished) {
    return absl::FailedPreconditionError("V is published only after the last iteration");
  }
  const bool known = std::any_of(user_host_.begin(), user_host_.end(),
                                 [&](const auto& e) { return e.second == host; });
  if (!known) return absl::PermissionDeniedError(absl::StrCat("host '", host, "' has no users"));
  return recommender_->item_profiles();
}

absl::Status HuaS3Job::ReportResult(const std::string& host, int64_t count, double mse, double mae,
                                    absl::Time now) {
  last_seen_[host] = now;
  if (state_ != HuaJobState::kFinishing) {
    return absl::FailedPreconditionError("results are reported after the last iteration");
  }
  if (count < 0 || !std::isfinite(mse) || !std::isfinite(mae) || mse < 0 || mae < 0) {
    return absl::InvalidArgumentError("fields 'test_count', 'test_mse', 'test_mae': invalid");
  }
  if (results_.count(host)) return absl::AlreadyExistsError("result already reported");
  results_[host] = {count, mse * count, mae * count};
  test_count_ += count;
  return absl::OkStatus();
}

double HuaS3Job::test_mse() const {
  double s = 0;
  for (const auto& [h, r] : results_) s += std::get<1>(r);
  return test_count_ > 0 ? s / test_count_ : -1;
}

double HuaS3Job::test_mae() const {
  double s = 0;
  for (const auto& [h, r] : results_) s += std::get<2>(r);
  return test_count_ > 0 ? s / test_count_ : -1;
}

}  // namespace fedmf::server
