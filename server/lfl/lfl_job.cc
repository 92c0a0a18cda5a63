#include "server/lfl/lfl_job.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/crypto/mod2k.h"
#include "common/lfl/item_matrix.h"
#include "common/lfl/wire/secagg_codec.h"
#include "common/log/log.h"
#include "common/secagg/parameters.h"
#include "common/secagg/signing.h"

namespace fedmf::server {
namespace {

constexpr size_t kMaxDroppedLines = 50;
// Largest DeviceBatch a host should send: well under the 8 MiB server limit.
constexpr int32_t kMaxBatchBytes = 4 << 20;

// k and t from the security analysis, the abort threshold m from the LFL
// skip rule, t <= m — the same choice as lfl::MakeSecAggSum.
// With `active` (signing devices) the thresholds must be those an
// equivocating server cannot split: 2t > holders (AdversaryModel::
// kSemiMalicious; devices refuse anything else, client_phases.cc).
// A colluding host is `corrupt_rate` n corrupt devices (its share of the
// roster): with an equivocating server they count on both sides, so the
// parameters must give 2t > holders + (its devices among them).
absl::StatusOr<secagg::GraphParameters> Parameters(bool complete, bool active, double omega,
                                                   double corrupt_rate, size_t n,
                                                   int64_t min_survivors) {
  secagg::SecurityRequirements req;
  req.dropout_rate = omega;
  if (active) {
    req.adversary = secagg::AdversaryModel::kSemiMalicious;
    req.corrupt_rate = corrupt_rate;
  }
  absl::StatusOr<secagg::GraphParameters> p = complete
                                                  ? secagg::ChooseCompleteGraphParameters(n, req)
                                                  : secagg::ChooseSecAggPlusParameters(n, req);
  if (!p.ok()) return p.status();
  p->min_survivors = static_cast<int>(min_survivors);
  p->threshold = std::min(p->threshold, p->min_survivors);
  return p;
}

// Slot of LflIterationRecord.phase_seconds: round 1's four phases, round 2's
// four, then the consistency checks of round 1 and round 2.
int PhaseSlot(int round, secagg::Phase p) {
  if (p == secagg::Phase::kConsistencyCheck) return 8 + (round - 1);
  return (round - 1) * 4 + static_cast<int>(p);
}
constexpr int kPhaseSlots = 10;

// The phase a server in `state` collects.
secagg::Phase PhaseOfState(secagg::ServerState state) {
  switch (state) {
    case secagg::ServerState::kR0AdvertiseKeys: return secagg::Phase::kAdvertiseKeys;
    case secagg::ServerState::kR1ShareKeys: return secagg::Phase::kShareKeys;
    case secagg::ServerState::kR2MaskedInput: return secagg::Phase::kMaskedInput;
    case secagg::ServerState::kConsistencyCheck: return secagg::Phase::kConsistencyCheck;
    case secagg::ServerState::kR3Unmasking: return secagg::Phase::kUnmasking;
    default: return secagg::Phase::kAbort;
  }
}

// Graph seeds tried before giving up on the host-collusion rule (SecAgg+
// only: a complete graph has one placement).
constexpr int kGraphSeedAttempts = 32;

}  // namespace

const char* LflStageName(LflJob::Stage s) {
  switch (s) {
    case LflJob::Stage::kJoining: return "joining";
    case LflJob::Stage::kPretrain: return "pretrain";
    case LflJob::Stage::kRound: return "stage2";
    case LflJob::Stage::kFinish: return "finish";
    case LflJob::Stage::kFinished: return "finished";
    case LflJob::Stage::kFailed: return "failed";
  }
  return "?";
}

LflJob::LflJob(net::LflJobConfig config, v1::JobSpec spec, absl::Duration liveness)
    : config_(std::move(config)),
      spec_(std::move(spec)),
      liveness_(liveness),
      rng_(random::Csprng::FromOsEntropy()) {}

absl::StatusOr<std::unique_ptr<LflJob>> LflJob::Create(const v1::JobSpec& spec, absl::Time now,
                                                       absl::Duration liveness) {
  ASSIGN_OR_RETURN(net::LflJobConfig config, net::LflJobFromSpec(spec));
  std::unique_ptr<LflJob> job(new LflJob(std::move(config), spec, liveness));
  job->stage_started_ = now;
  job->status_.set_devices(job->config_.num_devices);
  job->status_.set_stage1_test_mse(-1);
  job->status_.set_test_mse(-1);
  // For the granted device count; StartPretrain redoes it for the devices
  // that joined (sigma_v does not depend on n, the view's z does).
  RETURN_IF_ERROR(job->SetPrivacy(job->config_.num_devices));
  return job;
}

absl::Status LflJob::SetPrivacy(int64_t num_devices) {
  ASSIGN_OR_RETURN(lfl::LflPrivacy p, lfl::CalibrateLflPrivacy(config_.config, num_devices));
  status_.set_sigma_v(p.sigma_v);
  status_.set_noise_multiplier(p.noise_multiplier);
  status_.set_server_view_noise_multiplier(p.server_view_noise_multiplier);
  status_.set_epsilon(p.epsilon);
  return absl::OkStatus();
}

void LflJob::Fail(const std::string& why) {
  spdlog::error("LFL job '{}' failed: {}", config_.job_id, why);
  stage_ = Stage::kFailed;
  error_ = why;
  round_.reset();
}

bool LflJob::Live(const std::string& host, absl::Time now) const {
  auto it = last_seen_.find(host);
  return it != last_seen_.end() && now - it->second <= liveness_;
}

std::set<std::string> LflJob::HostsOf(const std::set<uint64_t>& devices) const {
  std::set<std::string> hosts;
  for (uint64_t d : devices) {
    if (auto it = host_of_.find(d); it != host_of_.end()) hosts.insert(it->second);
  }
  return hosts;
}

bool LflJob::Grants(const std::string& host) const {
  for (const auto& g : config_.grants) {
    if (g.host() == host) return true;
  }
  return false;
}

absl::Status LflJob::Hello(const std::string& host, const std::vector<uint64_t>& devices,
                           absl::Time now) {
  for (uint64_t d : devices) {
    std::optional<std::string> owner = net::GrantedHost(config_, d);
    if (!owner.has_value() || *owner != host) {
      int64_t skipped = 0;
      if (drop_log_.Allow(now, &skipped)) {
        spdlog::warn("LFL job '{}': host '{}' claims device {} it is not granted{}", config_.job_id,
                     host, d,
                     skipped > 0 ? absl::StrCat(" (", skipped, " rejections not logged)") : "");
      }
      return absl::PermissionDeniedError(absl::StrCat("field 'devices': device ", d,
                                                      " is not granted to host '", host,
                                                      "' in job '", config_.job_id, "'"));
    }
  }
  last_seen_[host] = now;
  if (stage_ == Stage::kJoining) {
    announced_[host] = std::set<uint64_t>(devices.begin(), devices.end());
    int64_t registered = 0;
    for (const auto& [h, ds] : announced_) registered += static_cast<int64_t>(ds.size());
    status_.set_registered(registered);
  }
  return absl::OkStatus();
}

absl::Status LflJob::StartPretrain(absl::Time now) {
  for (const auto& [h, ds] : announced_) {
    for (uint64_t d : ds) {
      selected_.push_back(d);
      host_of_[d] = h;
    }
  }
  std::sort(selected_.begin(), selected_.end());
  const int64_t n = static_cast<int64_t>(selected_.size());
  if (n < 2) return absl::FailedPreconditionError(absl::StrCat("only ", n, " devices joined"));
  RETURN_IF_ERROR(SetPrivacy(n));
  dp_ = {n, config_.config.omega, status_.sigma_v()};
  RETURN_IF_ERROR(lfl::ValidateTwoRoundParams(dp_));
  absl::StatusOr<lfl::LflCodecs> codecs =
      lfl::ChooseLflCodecs(dp_, config_.config.device.rating_max, config_.config.secagg_bits,
                           config_.config.device.GradientNormBound());
  if (!codecs.ok()) return codecs.status();
  codecs_.emplace(*std::move(codecs));
  schedule_.emplace(lfl::LflLearningRate(config_.config, status_.sigma_v(), n),
                    config_.config.lr_final_ratio, config_.config.iterations);
  // V(0) exactly as lfl::SimulateLfl draws it, so a seeded job is reproducible.
  random::Csprng root = random::Csprng::FromOptionalSeed(config_.config.seed);
  random::Csprng server_rng = root.Fork("server");
  v_ = lfl::InitialItemMatrix(config_.num_items, config_.config.dim,
                              config_.config.device.rating_max, server_rng);
  status_.set_registered(n);
  stage_ = Stage::kPretrain;
  stage_started_ = now;
  spdlog::info("LFL job '{}': {} devices on {} hosts; sigma_v {:.4g}, epsilon {:.4g}; Stage 1",
               config_.job_id, n, announced_.size(), status_.sigma_v(), status_.epsilon());
  return absl::OkStatus();
}

void LflJob::StartRound(int number, std::vector<uint64_t> roster, int64_t min_survivors,
                        absl::Time now) {
  Round r;
  r.number = number;
  r.codec = number == 1 ? &codecs_->round1 : &codecs_->round2;
  r.phase_started = now;
  if (roster.size() < 2 || min_survivors > static_cast<int64_t>(roster.size())) {
    // Nothing a secure aggregation may reveal: the round aborts at once.
    round_ = std::move(r);
    round_->sa.reset();
    return;
  }
  if (config_.secagg_session && key_session_ != nullptr && key_session_->established() &&
      !(number == 1 && KeySessionLost(min_survivors)) &&
      StartSessionRound(r, roster, min_survivors)) {
    round_ = std::move(r);
    return;
  }
  // The largest host's share of the roster (active secure aggregation
  // counts collusion in hosts). With a single host there is no OTHER host
  // to collude: it holds its devices' inputs anyway.
  std::map<std::string, size_t> per_host;
  size_t largest_host = 0;
  for (uint64_t d : roster) largest_host = std::max(largest_host, ++per_host[host_of_.at(d)]);
  const double host_rate =
      per_host.size() < 2 ? 0.0
                          : static_cast<double>(largest_host) / static_cast<double>(roster.size());
  absl::StatusOr<secagg::GraphParameters> params =
      Parameters(config_.complete_graph, config_.active_secagg, net::SecAggDesignDropout(config_),
                 host_rate, roster.size(), min_survivors);
  if (!params.ok()) {
    const std::string why = absl::StrCat(
        "round ", number, ": ", params.status().message(),
        config_.active_secagg
            ? absl::StrCat(" (active secure aggregation with the largest host holding ",
                           largest_host, " of ", roster.size(),
                           " devices: spread the devices over more hosts or lower omega or "
                           "lfl.secagg_design_dropout)")
            : "");
    if (number == 1) return Fail(why);
    spdlog::warn("LFL job '{}' iteration {}: {}; round 2 aborted", config_.job_id, iteration_, why);
    round_ = std::move(r);
    round_->sa.reset();
    return;
  }
  r.session.aggregation_id = rng_.NextU64();
  r.session.roster = std::move(roster);
  secagg::ApplyParameters(*params, r.session);
  r.session.graph_seed = rng_.NextU64();
  r.session.vector_length = static_cast<size_t>(v_.size());
  r.session.bits = r.codec->bits();
  r.session.consistency_check = config_.active_secagg;
  if (iteration_ == 0) {
    spdlog::info(
        "LFL job '{}' round {}: {} secure aggregation over {} devices ({} hosts, largest "
        "{}): {}, k {}, t {}, min survivors {}",
        config_.job_id, number, config_.active_secagg ? "active" : "semi-honest",
        r.session.roster.size(), per_host.size(), largest_host,
        r.session.graph == secagg::GraphKind::kHarary ? "SecAgg+" : "complete graph",
        r.session.degree, r.session.threshold, r.session.min_survivors);
  }
  if (config_.active_secagg) {
    // Collusion is counted in hosts: no host may hold >= t shares of a
    // device of another host (signing.h). The devices check it themselves
    // on certified keys and would abort; choose a graph they accept.
    std::vector<std::string> host_of;
    host_of.reserve(r.session.roster.size());
    for (uint64_t d : r.session.roster) host_of.push_back(host_of_.at(d));
    absl::Status placement = secagg::CheckHostCollusion(r.session, host_of);
    for (int attempt = 1; !placement.ok() && r.session.graph == secagg::GraphKind::kHarary &&
                          attempt < kGraphSeedAttempts;
         ++attempt) {
      r.session.graph_seed = rng_.NextU64();
      placement = secagg::CheckHostCollusion(r.session, host_of);
    }
    if (!placement.ok()) {
      const std::string why =
          absl::StrCat("round ", number, ": ", placement.message(),
                       " (active secure aggregation counts collusion in hosts)");
      // Round 1 has the same roster every iteration: the job cannot run.
      if (number == 1) return Fail(why);
      // Round 2 runs over the round-1 survivors: it aborts (the round-1 noise
      // stays in the update, as after any round-2 abort).
      spdlog::warn("LFL job '{}' iteration {}: {}; round 2 aborted", config_.job_id, iteration_,
                   why);
      round_ = std::move(r);
      round_->sa.reset();
      return;
    }
  }
  if (config_.secagg_session) {
    // A new key session: this aggregation is its setup.
    key_session_ = std::make_shared<secagg::ServerSession>();
    key_session_silent_ = 0;
    key_session_id_ = rng_.NextU64() | 1;  // 0 means "no session" on the wire
    r.key_session = key_session_id_;
    record_.set_key_setups(record_.key_setups() + 1);
    spdlog::info("LFL job '{}' iteration {} round {}: new secure-aggregation key session",
                 config_.job_id, iteration_, number);
  }
  absl::StatusOr<secagg::ServerStateMachine> sa =
      config_.secagg_session
          ? secagg::ServerStateMachine::CreateInSession(r.session, rng_.Fork("secagg-server"),
                                                        key_session_)
          : secagg::ServerStateMachine::Create(r.session, rng_.Fork("secagg-server"));
  if (!sa.ok()) return Fail(std::string(sa.status().message()));
  r.sa.emplace(*std::move(sa));
  r.sa->set_threads(unmasking_threads_);
  r.expected.insert(r.session.roster.begin(), r.session.roster.end());
  round_ = std::move(r);
}

bool LflJob::KeySessionLost(int64_t min_survivors) const {
  int64_t out = key_session_silent_;
  for (uint64_t d : selected_) out += key_session_->IsMember(d) ? 0 : 1;
  const int64_t n = static_cast<int64_t>(selected_.size());
  if (!secagg::SessionShouldBeRenewed(out, n, min_survivors)) return false;
  spdlog::info(
      "LFL job '{}' iteration {}: {} of {} devices are out of the key session; setting "
      "up a new one",
      config_.job_id, iteration_, out, n);
  return true;
}

bool LflJob::StartSessionRound(Round& r, const std::vector<uint64_t>& participants,
                               int64_t min_survivors) {
  const secagg::SessionConfig& setup = key_session_->setup_config();
  std::vector<uint64_t> absent;
  std::set_difference(setup.roster.begin(), setup.roster.end(), participants.begin(),
                      participants.end(), std::back_inserter(absent));
  if (setup.roster.size() != participants.size() + absent.size()) {
    return false;  // a participant outside the setup: it has no keys
  }
  r.session = setup;
  r.session.aggregation_id = *key_session_->last_aggregation_id() + 1;
  r.session.vector_length = static_cast<size_t>(v_.size());
  r.session.bits = r.codec->bits();
  // The setup's t stays; the abort rule is this round's (never below t).
  r.session.min_survivors = static_cast<int>(std::max<int64_t>(min_survivors, setup.threshold));
  r.key_session = key_session_id_;
  if (r.session.min_survivors > static_cast<int>(participants.size())) {
    r.sa.reset();  // too few to reach the threshold: the round aborts at once
    return true;
  }
  absl::StatusOr<secagg::ServerStateMachine> sa = secagg::ServerStateMachine::CreateInSession(
      r.session, rng_.Fork("secagg-server"), key_session_, absent);
  if (!sa.ok()) {
    spdlog::warn("LFL job '{}': the key session cannot run round {}: {}; setting up a new one",
                 config_.job_id, r.number, sa.status().message());
    return false;
  }
  r.sa.emplace(*std::move(sa));
  r.sa->set_threads(unmasking_threads_);
  r.expected.insert(participants.begin(), participants.end());
  return true;
}

v1::DeviceTask LflJob::TaskFor(const std::string& host) const {
  v1::DeviceTask t;
  t.set_kind(v1::DEVICE_TASK_KIND_IDLE);
  t.set_job_id(config_.job_id);
  *t.mutable_spec() = spec_;
  t.set_num_devices(static_cast<int64_t>(selected_.size()));
  t.set_max_batch_bytes(kMaxBatchBytes);
  t.set_iteration(iteration_);
  auto mine = [&](auto&& devices) {
    for (uint64_t d : devices) {
      auto it = host_of_.find(d);
      if (it != host_of_.end() && it->second == host) t.add_devices(d);
    }
  };
  switch (stage_) {
    case Stage::kJoining:
    case Stage::kFinished: break;
    case Stage::kFailed:
      t.set_kind(v1::DEVICE_TASK_KIND_ABORT);
      t.set_reason(error_);
      break;
    case Stage::kPretrain:
      if (stage1_reported_.count(host) == 0) {
        mine(selected_);
        if (t.devices_size() > 0) t.set_kind(v1::DEVICE_TASK_KIND_PRETRAIN);
      }
      break;
    case Stage::kFinish:
      if (stage3_reported_.count(host) == 0) {
        mine(selected_);
        if (t.devices_size() > 0) t.set_kind(v1::DEVICE_TASK_KIND_FINISH);
      }
      break;
    case Stage::kRound: {
      if (!round_.has_value() || !round_->sa.has_value() || round_->submitted.count(host) > 0) {
        break;
      }
      mine(round_->expected);
      if (t.devices_size() == 0) break;
      t.set_kind(v1::DEVICE_TASK_KIND_PHASE);
      t.set_round(round_->number);
      t.set_phase(net::DevicePhaseOf(round_->phase));
      t.set_aggregation_id(round_->session.aggregation_id);
      *t.mutable_session() = net::SessionToProto(round_->session);
      t.mutable_session()->set_key_session(round_->key_session);
      t.set_round1_survivors(record_.round1_survivors());
      break;
    }
  }
  return t;
}

absl::StatusOr<mf::Matrix> LflJob::Model(const std::string& host, int32_t iteration) {
  const bool ok = (stage_ == Stage::kPretrain && iteration == 0) ||
                  (stage_ == Stage::kRound && iteration == iteration_) ||
                  (stage_ == Stage::kFinish && iteration == config_.config.iterations);
  if (!ok) {
    return absl::FailedPreconditionError(absl::StrCat(
        "field 'iteration': V(", iteration, ") is not the current model of job '", config_.job_id,
        "' (stage ", LflStageName(stage_), ", iteration ", iteration_, ")"));
  }
  bool has_device = false;
  for (const auto& [d, h] : host_of_) has_device = has_device || h == host;
  if (!has_device) {
    return absl::PermissionDeniedError(
        absl::StrCat("host '", host, "' has no device in job '", config_.job_id, "'"));
  }
  return v_;  // (not in download_bytes: a host fetches V once for all its devices)
}

absl::Status LflJob::CheckHeader(const std::string& host, const v1::BatchHeader& h) const {
  // A host outside the job learns nothing of its state (stage, iteration,
  // aggregation id, phase), whatever header it sends.
  if (!Grants(host) || h.job_id() != config_.job_id) {
    return absl::PermissionDeniedError(absl::StrCat("host '", host, "' has no device in job '",
                                                    base::EscapePeerText(h.job_id(), 128), "'"));
  }
  if (stage_ != Stage::kRound || !round_.has_value() || !round_->sa.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("job '", config_.job_id, "' is in stage ",
                                                      LflStageName(stage_),
                                                      ": no aggregation open (stale message)"));
  }
  if (h.iteration() != iteration_ || h.round() != round_->number ||
      h.aggregation_id() != round_->session.aggregation_id ||
      h.phase() != net::DevicePhaseOf(round_->phase)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "stale or replayed batch: iteration ", h.iteration(), " round ", h.round(), " aggregation ",
        h.aggregation_id(), " phase ", v1::DevicePhase_Name(h.phase()), "; current is iteration ",
        iteration_, " round ", round_->number, " aggregation ", round_->session.aggregation_id,
        " phase ", v1::DevicePhase_Name(net::DevicePhaseOf(round_->phase))));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::InboxMessage>> LflJob::Inbox(const std::string& host,
                                                            const v1::BatchHeader& header) {
  RETURN_IF_ERROR(CheckHeader(host, header));
  std::vector<v1::InboxMessage> out;
  for (uint64_t d : round_->expected) {
    auto h = host_of_.find(d);
    if (h == host_of_.end() || h->second != host) continue;
    auto it = round_->inbox.find(d);
    if (it == round_->inbox.end()) continue;
    record_.set_download_bytes(record_.download_bytes() +
                               static_cast<int64_t>(it->second.ByteSizeLong()));
    out.push_back(it->second);
  }
  return out;
}

void LflJob::Drop(uint64_t device, const std::string& reason) {
  const std::string line =
      absl::StrCat("iteration ", iteration_, " round ", round_.has_value() ? round_->number : 0,
                   ": device ", device, ": ", reason);
  int64_t skipped = 0;
  if (drop_log_.Allow(absl::Now(), &skipped)) {
    spdlog::warn("LFL job '{}': dropping {}{}", config_.job_id, line,
                 skipped > 0 ? absl::StrCat(" (", skipped, " drops not logged)") : "");
  }
  record_.set_rejected_messages(record_.rejected_messages() + 1);
  if (static_cast<size_t>(status_.dropped_size()) >= kMaxDroppedLines) {
    status_.mutable_dropped()->erase(status_.mutable_dropped()->begin());
  }
  status_.add_dropped(line);
}

absl::Status LflJob::SubmitOne(const std::string& host, const v1::BatchHeader& header,
                               const v1::DeviceMessage& m) {
  const uint64_t d = m.device();
  auto owner = host_of_.find(d);
  const bool authorized = owner != host_of_.end() && owner->second == host;
  if (authorized) RETURN_IF_ERROR(CheckHeader(host, header));
  record_.set_upload_bytes(record_.upload_bytes() + static_cast<int64_t>(m.ByteSizeLong()));
  absl::Status verdict;
  if (!authorized) {
    verdict = absl::PermissionDeniedError(
        absl::StrCat("host '", host, "' is not authorized for device ", d));
  } else if (round_->expected.count(d) == 0) {
    verdict = absl::FailedPreconditionError(
        absl::StrCat("device ", d, " is not in this phase of the aggregation"));
  } else {
    absl::StatusOr<secagg::ClientMessage> msg = net::ClientMessageFromProto(m, round_->session);
    verdict = msg.ok() ? round_->sa->Receive(*msg) : msg.status();
  }
  if (!verdict.ok()) Drop(d, std::string(verdict.message()));
  return verdict;
}

void LflJob::HostSubmitted(const std::string& host, const v1::BatchHeader& header) {
  if (CheckHeader(host, header).ok()) round_->submitted.insert(host);
}

absl::Status LflJob::ReportMetrics(const std::string& host, const v1::DeviceMetricsReport& r) {
  if (r.job_id() != config_.job_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("field 'job_id': '", r.job_id(), "' is not the active job"));
  }
  if (!std::isfinite(r.test_mse()) || r.test_mse() < 0 || r.test_count() < 0 ||
      !(r.epsilon_spent() >= 0)) {
    return absl::InvalidArgumentError("field 'test_mse': must be finite and >= 0");
  }
  std::set<std::string>* reported = nullptr;
  std::vector<mf::ErrorMetrics>* parts = nullptr;
  if (r.stage() == 1 && stage_ == Stage::kPretrain) {
    reported = &stage1_reported_;
    parts = &stage1_parts_;
  } else if (r.stage() == 3 && stage_ == Stage::kFinish) {
    reported = &stage3_reported_;
    parts = &stage3_parts_;
  } else {
    return absl::FailedPreconditionError(absl::StrCat("field 'stage': a stage-", r.stage(),
                                                      " report in stage ", LflStageName(stage_)));
  }
  if (!reported->insert(host).second) {
    return absl::AlreadyExistsError(absl::StrCat("host '", host, "' already reported"));
  }
  mf::ErrorMetrics e;
  e.mse = r.test_mse();
  e.count = r.test_count();
  parts->push_back(e);
  return absl::OkStatus();
}

// Stage 1 and Stage 3 keep a host busy without RPCs for as long as its
// devices train, so silence is no sign of absence here: every host of D is
// waited for until the join deadline.
bool LflJob::AllReported(const std::set<std::string>& reported) const {
  for (const std::string& h : HostsOf(std::set<uint64_t>(selected_.begin(), selected_.end()))) {
    if (reported.count(h) == 0) return false;
  }
  return true;
}

bool LflJob::PhaseDue(absl::Time now) const {
  const Round& r = *round_;
  if (now - r.phase_started >= absl::Seconds(config_.phase_deadline_seconds)) return true;
  if (r.sa->AllExpectedReceived()) return true;
  for (const std::string& h : HostsOf(r.expected)) {
    if (r.submitted.count(h) == 0 && Live(h, now)) return false;
  }
  return true;
}

void LflJob::ClosePhase(absl::Time now) {
  Round& r = *round_;
  const int slot = PhaseSlot(r.number, r.phase);
  record_.set_phase_seconds(
      slot, record_.phase_seconds(slot) + absl::ToDoubleSeconds(now - r.phase_started));
  const auto before = r.sa->rejections().size();
  const secagg::ServerState closing = r.sa->state();
  const std::set<uint64_t> asked = r.expected;
  absl::StatusOr<std::vector<secagg::ServerMessage>> next = r.sa->ClosePhase();
  if (r.number == 1 && r.key_session != 0 && closing == secagg::ServerState::kR0AdvertiseKeys &&
      key_session_->established()) {
    // Members asked to check in that stayed silent (non-members were never
    // eligible; KeySessionLost counts them itself).
    int64_t silent = -static_cast<int64_t>(r.sa->Survivors(secagg::Phase::kAdvertiseKeys).size());
    for (uint64_t d : asked) silent += key_session_->IsMember(d) ? 1 : 0;
    key_session_silent_ = silent;
  }
  for (size_t k = before; k < r.sa->rejections().size(); ++k) {
    const secagg::Rejection& x = r.sa->rejections()[k];
    Drop(x.device, std::string(x.reason.message()));
  }
  if (!next.ok()) return Fail(std::string(next.status().message()));
  r.inbox.clear();
  r.expected.clear();
  r.submitted.clear();
  r.phase_started = now;
  if (r.sa->state() == secagg::ServerState::kAborted ||
      r.sa->state() == secagg::ServerState::kCompleted) {
    return;  // Advance() handles the end of the round
  }
  r.phase = PhaseOfState(r.sa->state());
  for (const secagg::ServerMessage& m : *next) {
    if (std::holds_alternative<secagg::AbortNotice>(m)) continue;
    v1::InboxMessage w = net::ServerMessageToProto(m);
    r.expected.insert(w.device());
    r.inbox.emplace(w.device(), std::move(w));
  }
}

void LflJob::FinishIteration(absl::Time now) {
  if (!record_.skipped()) {
    const double step = schedule_->At(iteration_) / static_cast<double>(record_.round1_survivors());
    lfl::StepItemMatrix(v_, sum_, step, config_.config.device.rating_max);
    record_.set_remaining_noise_variance(
        lfl::RemainingVariance(dp_, record_.round1_survivors(), record_.round2_survivors()));
  }
  record_.set_seconds(absl::ToDoubleSeconds(now - iteration_started_));
  spdlog::info("LFL job '{}' iteration {}/{}: U1 {} U2 {}{} in {:.2f}s ({} rejected)",
               config_.job_id, iteration_ + 1, config_.config.iterations,
               record_.round1_survivors(), record_.round2_survivors(),
               record_.skipped() ? " skipped" : "", record_.seconds(), record_.rejected_messages());
  *status_.add_iterations() = record_;
  finished_.push_back(record_);
  sum_.clear();
  round_.reset();
  ++iteration_;
  if (iteration_ >= config_.config.iterations) {
    stage_ = Stage::kFinish;
    stage_started_ = now;
    return;
  }
  record_.Clear();
  record_.set_iteration(iteration_);
  record_.set_selected(static_cast<int64_t>(selected_.size()));
  for (int k = 0; k < kPhaseSlots; ++k) record_.add_phase_seconds(0);
  iteration_started_ = now;
  StartRound(1, selected_, lfl::MinSurvivors(dp_), now);
}

bool LflJob::Advance(absl::Time now) {
  const absl::Duration deadline = absl::Seconds(config_.join_deadline_seconds);
  switch (stage_) {
    case Stage::kJoining: {
      const bool all = status_.registered() == config_.num_devices;
      if (!all && now - stage_started_ < deadline) return false;
      if (auto s = StartPretrain(now); !s.ok()) Fail(std::string(s.message()));
      return true;
    }
    case Stage::kPretrain: {
      if (!AllReported(stage1_reported_) && now - stage_started_ < deadline) return false;
      const mf::ErrorMetrics e = mf::Combine(stage1_parts_);
      status_.set_stage1_test_mse(stage1_parts_.empty() ? -1 : e.mse);
      status_.set_stage1_test_count(e.count);
      stage_ = Stage::kRound;
      iteration_started_ = now;
      iteration_ = 0;
      record_.Clear();
      record_.set_iteration(0);
      record_.set_selected(static_cast<int64_t>(selected_.size()));
      for (int k = 0; k < kPhaseSlots; ++k) record_.add_phase_seconds(0);
      StartRound(1, selected_, lfl::MinSurvivors(dp_), now);
      return true;
    }
    case Stage::kRound: {
      if (!round_.has_value()) return false;
      Round& r = *round_;
      if (r.sa.has_value() && r.sa->state() != secagg::ServerState::kAborted &&
          r.sa->state() != secagg::ServerState::kCompleted) {
        if (!PhaseDue(now)) return false;
        ClosePhase(now);
        if (stage_ == Stage::kFailed) return true;
        if (r.sa->state() != secagg::ServerState::kAborted &&
            r.sa->state() != secagg::ServerState::kCompleted) {
          return true;
        }
      }
      // The round's aggregation ended (or never could start).
      const bool completed = r.sa.has_value() && r.sa->state() == secagg::ServerState::kCompleted;
      if (r.number == 1) {
        if (!completed) {
          record_.set_skipped(true);
          FinishIteration(now);
          return true;
        }
        absl::StatusOr<secagg::AggregationResult> res = r.sa->Result();
        if (!res.ok()) {
          Fail(std::string(res.status().message()));
          return true;
        }
        sum_ = r.codec->DecodeSumVector(res->sum);
        record_.set_round1_survivors(static_cast<int64_t>(res->included.size()));
        // Round 2 over U1 still present (they answered the unmasking request).
        const std::vector<secagg::DeviceId> u4 = r.sa->Survivors(secagg::Phase::kUnmasking);
        std::vector<uint64_t> roster2;
        std::set_intersection(res->included.begin(), res->included.end(), u4.begin(), u4.end(),
                              std::back_inserter(roster2));
        const lfl::TwoRoundParams dp2{std::max<int64_t>(1, static_cast<int64_t>(roster2.size())),
                                      config_.config.omega, status_.sigma_v()};
        StartRound(2, std::move(roster2), lfl::MinSurvivors(dp2), now);
        return true;
      }
      if (completed) {
        absl::StatusOr<secagg::AggregationResult> res = r.sa->Result();
        if (!res.ok()) {
          Fail(std::string(res.status().message()));
          return true;
        }
        const std::vector<double> bar = r.codec->DecodeSumVector(res->sum);
        for (size_t k = 0; k < sum_.size(); ++k) sum_[k] += bar[k];
        record_.set_round2_survivors(static_cast<int64_t>(res->included.size()));
      }
      FinishIteration(now);
      return true;
    }
    case Stage::kFinish: {
      if (!AllReported(stage3_reported_) && now - stage_started_ < deadline) return false;
      const mf::ErrorMetrics e = mf::Combine(stage3_parts_);
      status_.set_test_mse(stage3_parts_.empty() ? -1 : e.mse);
      status_.set_test_count(e.count);
      stage_ = Stage::kFinished;
      spdlog::info("LFL job '{}' finished: test MSE {:.4f} (Stage 1 alone {:.4f}), epsilon {:.4g}",
                   config_.job_id, status_.test_mse(), status_.stage1_test_mse(),
                   status_.epsilon());
      return true;
    }
    default: return false;
  }
}

std::vector<v1::LflIterationRecord> LflJob::TakeFinishedIterations() {
  std::vector<v1::LflIterationRecord> out;
  out.swap(finished_);
  return out;
}

}  // namespace fedmf::server
