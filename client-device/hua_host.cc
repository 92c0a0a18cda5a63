#include "client-device/hua_host.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client-device/device_ledger.h"
#include "client-device/hua_role.h"
#include "common/base/status_macros.h"
#include "common/data/loaders.h"
#include "common/data/partition.h"
#include "common/hua/accounting.h"
#include "common/hua/wire/hua_codec.h"
#include "common/log/log.h"
#include "common/net/client_context.h"
#include "common/net/reconnect.h"
#include "common/net/stop_canceller.h"
#include "common/net/tls_diagnosis.h"
#include "fedmf/v1/hua.grpc.pb.h"

namespace fedmf::device {
namespace {

using net::FromGrpc;

// The host's users with its own train/test split (PartitionCentral with the
// job's test fraction and the host's seed: with --seed equal to the job's,
// the same split as `fedmf train`), loaded under the host's declared range.
absl::StatusOr<std::vector<HuaLocalUser>> LoadUsers(const HuaHostOptions& o, const net::HuaJob& job,
                                                    data::RatingRange* own_range) {
  data::LoadOptions load;
  if (o.rating_range.has_value()) load.range = *o.rating_range;
  ASSIGN_OR_RETURN(auto dataset, data::LoadDataSpec(o.data_spec, load));
  *own_range = dataset.range;
  if (o.rating_range.has_value() &&
      !RatingRangeRefusal(*o.rating_range, dataset.range.min, dataset.range.max).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rating-range ", o.rating_range->min, ",", o.rating_range->max, ": ",
                     o.data_spec, " declares [", dataset.range.min, ", ", dataset.range.max, "]"));
  }
  if (std::string why = RatingRangeRefusal(dataset.range, job.range.min, job.range.max);
      !why.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("REFUSED: ", why));
  }
  if (dataset.num_items > job.num_items) {
    return absl::InvalidArgumentError(absl::StrCat(o.data_spec, ": ", dataset.num_items,
                                                   " items, the job declares ", job.num_items));
  }
  ASSIGN_OR_RETURN(auto fed,
                   data::PartitionCentral(dataset, {job.test_fraction, o.seed.value_or(1)}));
  const data::PartyData& all = fed.parties[0];
  if (o.first_user < 0 || o.count < 1 || o.first_user + o.count > all.num_users()) {
    return absl::InvalidArgumentError(absl::StrCat("--first/--count: users [", o.first_user, ", ",
                                                   o.first_user + o.count, ") but the data has ",
                                                   all.num_users()));
  }
  std::vector<HuaLocalUser> users(o.count);
  for (int32_t k = 0; k < o.count; ++k) users[k].user = o.first_user + k;
  auto mine = [&](int32_t u) { return u >= o.first_user && u < o.first_user + o.count; };
  for (const data::Rating& r : all.train) {
    if (mine(r.user)) users[r.user - o.first_user].train.push_back({r.item, r.value});
  }
  for (const data::Rating& r : all.test) {
    if (mine(r.user)) users[r.user - o.first_user].test.push_back(r);
  }
  return users;
}

class Host {
 public:
  Host(const HuaHostOptions& o, const std::atomic<bool>& stop) : o_(o), stop_(stop) {}
  absl::StatusOr<HuaHostResult> Run();
  const std::string& job_id() const { return job_id_; }
  // Whether the server offered this host a job (valid or not).
  bool offered() const { return offered_; }

 private:
  absl::Status Connect();
  absl::StatusOr<v1::JobSpec> WaitForJob();
  absl::Status HandleRound(const v1::HuaTasks& tasks);
  absl::Status Finish();
  void CountBytes(int32_t user, int64_t down, int64_t up);
  // Charges the users of an iteration's pass 0 (a repair pass reuses the
  // iteration's charge: the aggregator decodes one sum per item and
  // iteration); returns who may report.
  absl::StatusOr<std::set<int32_t>> Charge(const v1::HuaTasks& tasks);

  const HuaHostOptions& o_;
  const std::atomic<bool>& stop_;
  std::shared_ptr<grpc::Channel> channel_;  // to the server
  std::unique_ptr<v1::HuaRecommender::Stub> server_;
  std::unique_ptr<v1::HuaAggregator::Stub> aggregator_;
  std::unique_ptr<HuaUserRole> role_;
  std::unique_ptr<DeviceLedger> ledger_;
  hua::HuaPrivacy plan_;
  int32_t charged_iteration_ = 0;
  std::set<int32_t> charged_;  // users charged for charged_iteration_
  net::HuaJob job_;
  std::string job_id_;
  bool offered_ = false;
  double poll_seconds_ = 2;
  std::tuple<int, int32_t, int32_t> last_round_{-1, -1, -1};  // (phase, round, pass) handled
  HuaHostResult result_;
};

absl::Status Host::Connect() {
  auto ch = net::MakeChannel(o_.server, o_.tls,
                             net::ExpectedPeer{o_.server_cert_name, pki::Role::kServer});
  if (!ch.ok()) return ch.status();
  channel_ = *ch;
  server_ = v1::HuaRecommender::NewStub(channel_);
  return absl::OkStatus();
}

absl::StatusOr<v1::JobSpec> Host::WaitForJob() {
  v1::HuaJobQuery q;
  q.set_host(o_.host);
  while (!stop_) {
    v1::HuaJobOffer offer;
    auto ctx = net::DeadlineContext(absl::Seconds(10));
    grpc::Status s = server_->GetJob(ctx.get(), q, &offer);
    if (s.ok() && offer.active() && o_.skip_jobs.count(offer.spec().job_id()) == 0) {
      poll_seconds_ = offer.poll_seconds() > 0 ? offer.poll_seconds() : 2;
      return offer.spec();
    }
    if (!s.ok() && s.error_code() == grpc::StatusCode::PERMISSION_DENIED) return FromGrpc(s);
    // The poll interval; after a failed call it ends as soon as the server is reachable.
    net::WaitBeforeRetry(*channel_, absl::Milliseconds(200), stop_);
  }
  return absl::CancelledError("stopped");
}

void Host::CountBytes(int32_t user, int64_t down, int64_t up) {
  HuaHostTraffic& t = result_.traffic;
  ++t.user_rounds;
  t.down_bytes += down;
  t.up_bytes += up;
  if (role_->num_ratings(user) <= 20) {
    t.max_down_le20 = std::max(t.max_down_le20, down);
    t.max_up_le20 = std::max(t.max_up_le20, up);
  }
}

absl::StatusOr<std::set<int32_t>> Host::Charge(const v1::HuaTasks& tasks) {
  if (tasks.pass() > 0) {
    if (tasks.round() == charged_iteration_) return charged_;
    return std::set<int32_t>{};
  }
  std::vector<uint64_t> users;
  for (const v1::HuaIterationRequest& w : tasks.iteration()) {
    if (w.user() >= 0) users.push_back(static_cast<uint64_t>(w.user()));
  }
  // Written before anything leaves: a user already charged for this
  // iteration (a replay) or over her budget is left out.
  ASSIGN_OR_RETURN(std::vector<uint64_t> charged,
                   ledger_->Charge(users, job_id_, tasks.round(), plan_.noise_multiplier));
  charged_iteration_ = tasks.round();
  charged_.clear();
  for (uint64_t u : charged) charged_.insert(static_cast<int32_t>(u));
  return charged_;
}

absl::Status Host::HandleRound(const v1::HuaTasks& tasks) {
  const auto header = std::make_tuple(static_cast<int>(tasks.phase()), tasks.round(), tasks.pass());
  if (header == last_round_) {
    // Answered already (some of our users were rejected and stay pending
    // until the round deadline): do not spin on the long poll.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return absl::OkStatus();
  }
  const int32_t dim = job_.params.dim;
  if (tasks.kind() == v1::HUA_TASK_KIND_ITERATION) {
    // Iterations are numbered 1..T; nothing beyond the job's T or the policy.
    if (std::string why =
            IterationRefusal(o_.policy, int64_t{tasks.round()} - 1, job_.params.iterations);
        !why.empty()) {
      last_round_ = header;
      return absl::FailedPreconditionError(
          absl::StrCat("REFUSED iteration ", tasks.round(), ": ", why, "; no user reports"));
    }
  }
  if (o_.drop_at_iteration > 0 && tasks.kind() == v1::HUA_TASK_KIND_ITERATION &&
      tasks.round() >= o_.drop_at_iteration) {
    spdlog::warn("host '{}': dropping out mid-iteration {} (after the download, as asked)", o_.host,
                 tasks.round());
    return absl::AbortedError("dropped out mid-iteration (--hua-drop-at-iteration)");
  }
  v1::HuaReportBatch batch;
  batch.set_host(o_.host);
  batch.set_job_id(job_id_);
  batch.set_phase(tasks.phase());
  batch.set_round(tasks.round());
  batch.set_pass(tasks.pass());
  auto add = [&](int32_t user, int64_t down, absl::StatusOr<hua::MaskedReport> report) {
    if (!report.ok()) {
      // One user's bad request must not stop the others: it simply does not
      // report, and the server treats it as offline.
      spdlog::warn("host '{}': user {}: {}", o_.host, user, report.status().message());
      return;
    }
    *batch.add_reports() = net::ToWire(*report);
    CountBytes(user, down, static_cast<int64_t>(batch.reports().rbegin()->ByteSizeLong()));
  };
  if (tasks.kind() == v1::HUA_TASK_KIND_INIT) {
    for (const v1::HuaInitRequest& w : tasks.init()) {
      ASSIGN_OR_RETURN(auto req, net::FromWire(w, tasks.round(), dim));
      add(w.user(), static_cast<int64_t>(w.ByteSizeLong()), role_->HandleInit(req));
    }
  } else {
    ASSIGN_OR_RETURN(std::set<int32_t> may_report, Charge(tasks));
    for (const v1::HuaIterationRequest& w : tasks.iteration()) {
      if (!may_report.count(w.user())) {
        spdlog::warn(
            "host '{}': user {} does not report in iteration {}: not charged (over its "
            "budget, or already released in this iteration)",
            o_.host, w.user(), tasks.round());
        continue;
      }
      ASSIGN_OR_RETURN(auto req, net::FromWire(w, tasks.round(), tasks.pass(), dim));
      add(w.user(), static_cast<int64_t>(w.ByteSizeLong()), role_->HandleIteration(req));
    }
  }
  last_round_ = header;
  if (batch.reports().empty()) return absl::OkStatus();
  v1::HuaSubmitResponse submitted;
  {
    auto ctx = net::DeadlineContext(absl::Seconds(30));
    if (auto s = FromGrpc(aggregator_->Submit(ctx.get(), batch, &submitted)); !s.ok()) {
      return absl::UnavailableError(absl::StrCat("aggregator: ", s.message()));
    }
  }
  for (const std::string& r : submitted.rejected()) {
    spdlog::warn("host '{}': aggregator rejected {}", o_.host, r);
  }
  v1::HuaDoneRequest done;
  done.set_host(o_.host);
  done.set_job_id(job_id_);
  done.set_phase(tasks.phase());
  done.set_round(tasks.round());
  done.set_pass(tasks.pass());
  done.mutable_users()->Add(submitted.accepted().begin(), submitted.accepted().end());
  v1::HuaAck ack;
  auto ctx = net::DeadlineContext(absl::Seconds(30));
  return FromGrpc(server_->Done(ctx.get(), done, &ack));
}

absl::Status Host::Finish() {
  v1::HuaFinalItemsRequest req;
  req.set_host(o_.host);
  req.set_job_id(job_id_);
  v1::HuaFinalItems items;
  {
    auto ctx = net::DeadlineContext(absl::Seconds(60));
    RETURN_IF_ERROR(FromGrpc(server_->FinalItems(ctx.get(), req, &items)));
  }
  if (items.cols() != job_.params.dim || items.rows() < 1 ||
      static_cast<int64_t>(items.values_size()) != int64_t{items.rows()} * items.cols()) {
    return absl::InvalidArgumentError("final V: the shape does not match its values");
  }
  mf::Matrix v(items.rows(), items.cols());
  for (int32_t r = 0; r < items.rows(); ++r) {
    for (int32_t c = 0; c < items.cols(); ++c) v(r, c) = items.values(r * items.cols() + c);
  }
  ASSIGN_OR_RETURN(auto m, role_->Evaluate(v));
  for (int32_t u = o_.first_user; u < o_.first_user + o_.count; ++u) {
    ASSIGN_OR_RETURN(double eps, ledger_->EpsilonIf(static_cast<uint64_t>(u), 0, 0));
    result_.epsilon_spent = std::max(result_.epsilon_spent, eps);
  }
  result_.test_count = m.count;
  result_.test_mse = m.mse;
  result_.test_mae = m.mae;
  // The server waits for every host's report; its metrics (computed on the
  // users' data without noise) only when the host's policy opts in.
  v1::HuaResultReport report;
  report.set_host(o_.host);
  report.set_job_id(job_id_);
  if (o_.policy.report_metrics) {
    report.set_test_count(m.count);
    report.set_test_mse(m.mse);
    report.set_test_mae(m.mae);
  }
  v1::HuaAck ack;
  auto ctx = net::DeadlineContext(absl::Seconds(30));
  return FromGrpc(server_->ReportResult(ctx.get(), report, &ack));
}

absl::StatusOr<HuaHostResult> Host::Run() {
  RETURN_IF_ERROR(Connect());
  ASSIGN_OR_RETURN(auto spec, WaitForJob());
  // From here on a failure ends this job only: the spec is the server's, and
  // a malformed one must not stop the daemon (RunHuaHostJobs skips the job).
  offered_ = true;
  job_id_ = spec.job_id();
  result_.job_id = job_id_;
  auto job = net::HuaJobFromSpec(spec);
  if (!job.ok()) {
    spdlog::error("host '{}': REFUSED job '{}': {}; its users take no part", o_.host, job_id_,
                  job.status().message());
    return job.status();
  }
  job_ = *job;
  // The policy decision, before any data is read. Only the valid variant
  // has an epsilon (docs/privacy.md, section hua): the paper's mechanism is
  // non-private whatever noise it adds (allow_non_private).
  const double job_epsilon =
      hua::IsPrivate(job_.params) ? job_.params.epsilon : std::numeric_limits<double>::infinity();
  if (std::string why = DevicePolicyRefusal(o_.policy, "hua-s3", job_epsilon, job_.params.delta,
                                            job_.params.iterations);
      !why.empty()) {
    spdlog::error("host '{}': REFUSED job '{}': {}; its users take no part", o_.host, job_id_, why);
    return absl::FailedPreconditionError(absl::StrCat("REFUSED by the host's policy: ", why));
  }
  if (o_.aggregator.empty()) {
    return absl::InvalidArgumentError(
        "--aggregator is required for hua-s3: the host dials only the aggregator its own "
        "configuration names, never the job's");
  }
  if (spec.hua().aggregator() != o_.aggregator) {
    spdlog::warn("host '{}': job '{}' names aggregator '{}'; using this host's own '{}'", o_.host,
                 job_id_, spec.hua().aggregator(), o_.aggregator);
  }
  auto agg_ch = net::MakeChannel(
      o_.aggregator, o_.tls, net::ExpectedPeer{o_.aggregator_cert_name, pki::Role::kAggregator});
  if (!agg_ch.ok()) return agg_ch.status();
  aggregator_ = v1::HuaAggregator::NewStub(*agg_ch);
  data::RatingRange own_range;
  auto users = LoadUsers(o_, job_, &own_range);
  if (!users.ok()) {
    spdlog::error("host '{}': job '{}': {}", o_.host, job_id_, users.status().message());
    return users.status();
  }
  // From here on the range is the host's own (they agree; Delta is the host's).
  job_.range = own_range;
  // The noise and its accounting from the job's public parameters and the
  // host's own range; every bound a user enforces is checked by the user.
  ASSIGN_OR_RETURN(plan_, hua::PlanPrivacy(job_.params, own_range));
  if (o_.ledger_path.empty()) {
    return absl::InvalidArgumentError("the Hua host needs a privacy ledger (--ledger)");
  }
  ASSIGN_OR_RETURN(ledger_,
                   DeviceLedger::Open(o_.ledger_path, {o_.policy.max_epsilon, o_.policy.delta,
                                                       o_.policy.allow_non_private}));
  // Every user of the host must afford the job's T releases at z.
  if (std::string why = BudgetRefusal(*ledger_, o_.first_user, o_.count, plan_.noise_multiplier,
                                      job_.params.iterations, "user");
      !why.empty()) {
    spdlog::error("host '{}': REFUSED job '{}': {}; its users take no part", o_.host, job_id_, why);
    return absl::FailedPreconditionError(absl::StrCat("REFUSED by the host's budget: ", why));
  }
  ASSIGN_OR_RETURN(auto role,
                   HuaUserRole::Create(job_.params, own_range, std::move(*users), o_.seed));
  role_ = std::move(role);
  result_.users = role_->num_users();
  v1::HuaRegisterRequest reg;
  reg.set_host(o_.host);
  reg.set_job_id(job_id_);
  for (const hua::UserHello& h : role_->Hellos()) {
    v1::HuaUserHello* w = reg.add_users();
    w->set_user(h.user);
    w->mutable_items()->Add(h.items.begin(), h.items.end());
  }
  {
    v1::HuaRegisterResponse resp;
    auto ctx = net::DeadlineContext(absl::Seconds(30));
    RETURN_IF_ERROR(FromGrpc(server_->Register(ctx.get(), reg, &resp)));
    spdlog::info("host '{}': job '{}': {} users registered", o_.host, job_id_, resp.registered());
  }
  v1::HuaPollRequest poll;
  poll.set_host(o_.host);
  poll.set_job_id(job_id_);
  net::TlsCauseOnce tls_cause(  // logs each cause once, not on every retry
      o_.server, o_.tls,
      net::ExpectedPeer{o_.server_cert_name, pki::Role::kServer, "--server-name"});
  net::StopCanceller canceller(&stop_);  // a stop ends the long poll at once
  while (!stop_) {
    v1::HuaTasks tasks;
    auto ctx = net::DeadlineContext(absl::Seconds(poll_seconds_ + 10));
    absl::Status polled;
    {
      net::StopCanceller::Scope cancel_on_stop(&canceller, ctx.get());
      polled = FromGrpc(server_->Poll(ctx.get(), poll, &tasks));
    }
    if (stop_) break;
    if (auto s = polled; !s.ok()) {
      spdlog::warn("host '{}': poll: {} (retrying)", o_.host, s.message());
      if (const std::string cause = tls_cause.NewCause(s); !cause.empty()) {
        spdlog::error("host '{}': server {}: cause: {}", o_.host, o_.server, cause);
      }
      net::WaitBeforeRetry(*channel_, absl::Milliseconds(500), stop_);  // server restarting
      continue;
    }
    switch (tasks.kind()) {
      case v1::HUA_TASK_KIND_INIT:
      case v1::HUA_TASK_KIND_ITERATION:
        if (auto s = HandleRound(tasks); !s.ok()) {
          if (absl::IsAborted(s)) return s;
          spdlog::warn("host '{}': round {} pass {}: {}", o_.host, tasks.round(), tasks.pass(),
                       s.message());
        }
        break;
      case v1::HUA_TASK_KIND_FINISH: RETURN_IF_ERROR(Finish()); return result_;
      case v1::HUA_TASK_KIND_ABORT:
        return absl::AbortedError(absl::StrCat("job '", job_id_, "' failed: ", tasks.reason()));
      default: break;
    }
  }
  return absl::CancelledError("stopped");
}

}  // namespace

absl::Status RunHuaHostJobs(const HuaHostOptions& options, const std::atomic<bool>& stop,
                            const std::function<void(const HuaHostResult&)>& on_done) {
  HuaHostOptions o = options;
  while (!stop) {
    Host host(o, stop);
    absl::StatusOr<HuaHostResult> r = host.Run();
    if (host.offered()) o.skip_jobs.insert(host.job_id());
    if (r.ok()) {
      on_done(*r);
      continue;
    }
    if (absl::IsCancelled(r.status())) break;
    if (!host.offered()) return r.status();  // e.g. this host is not a device
    // The test hook (--hua-drop-at-iteration) simulates a host that vanishes:
    // the process ends instead of waiting for the next job.
    if (o.drop_at_iteration > 0 && absl::IsAborted(r.status())) return r.status();
    spdlog::error("host '{}': job '{}': {} (waiting for the next job)", o.host, host.job_id(),
                  r.status().message());
    for (int k = 0; k < 20 && !stop; ++k)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::CancelledError("stopped");
}

}  // namespace fedmf::device
