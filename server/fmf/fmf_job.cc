#include "server/fmf/fmf_job.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/fmf/wire/job_codec.h"
#include "common/log/log.h"

namespace fedmf::server {

FmfJob::FmfJob(StoredJob stored, fmf::JobConfig config, FmfJobOptions options, absl::Time now,
               random::Csprng rng)
    : stored_(std::move(stored)),
      config_(std::move(config)),
      options_(std::move(options)),
      rng_(std::move(rng)),
      phase_started_(now) {
  round_deadline_ = stored_.spec.round_deadline_seconds() > 0
                        ? absl::Seconds(stored_.spec.round_deadline_seconds())
                        : options_.default_round_deadline;
  for (size_t i = 0; i < stored_.parties.size(); ++i) {
    index_[stored_.parties[i].name] = static_cast<int32_t>(i);
  }
}

absl::StatusOr<FmfJob> FmfJob::Restore(StoredJob stored, FmfJobOptions options, absl::Time now,
                                       random::Csprng rng) {
  ASSIGN_OR_RETURN(fmf::JobConfig config, net::JobConfigFromSpec(stored.spec));
  RETURN_IF_ERROR(CheckJobSpecSizes(stored.spec, options.limits));
  const bool vertical = config.split == fmf::SplitKind::kVertical;
  for (const StoredParty& p : stored.parties) {
    RETURN_IF_ERROR(CheckDeclaredSizes(absl::StrCat("stored OfferReply of party '", p.name, "'"),
                                       p.users, p.items, p.global_users, p.global_items, vertical,
                                       config.dim, options.limits));
  }
  FmfJob job(std::move(stored), std::move(config), std::move(options), now, std::move(rng));
  if (job.stored_.state == v1::JOB_STATE_RUNNING) {
    if (!job.stored_.shared.has_value()) {
      return absl::DataLossError(
          absl::StrCat("job '", job.id(), "' is running but has no stored shared matrix"));
    }
    ASSIGN_OR_RETURN(std::optional<coupling::FlatLayout> layout, job.CouplingLayout());
    ASSIGN_OR_RETURN(fmf::ServerSession session,
                     fmf::ServerSession::Restore(job.config_, job.AveragingWeights(),
                                                 job.stored_.round, *job.stored_.shared, layout));
    job.session_.emplace(std::move(session));
  }
  return job;
}

// ------------------------------------------------------------------ parties

absl::Status FmfJob::NotInJob(const std::string& party, const std::string& job_id) {
  return absl::PermissionDeniedError(absl::StrCat("party '", party, "' has no part in job '",
                                                  base::EscapePeerText(job_id, 128), "'"));
}

absl::StatusOr<int32_t> FmfJob::RosterIndex(const std::string& party,
                                            const std::string& job_id) const {
  // Membership first: a party outside the roster learns the same whether
  // the job it named is the active one, another, or none.
  auto it = index_.find(party);
  if (it == index_.end()) return NotInJob(party, job_id);
  if (job_id != id()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "field 'job_id': job '", base::EscapePeerText(job_id, 128), "' is not the active job"));
  }
  return it->second;
}

v1::Task FmfJob::TaskFor(const std::string& party) const {
  v1::Task task;
  task.set_kind(v1::TASK_KIND_IDLE);
  auto it = index_.find(party);
  if (it == index_.end()) return task;
  const StoredParty& p = stored_.parties[it->second];
  switch (stored_.state) {
    case v1::JOB_STATE_WAITING:
      if (p.replied) break;
      if (psi_.has_value()) {
        // Every roster party accepted and the alignment is open.
        task.set_kind(v1::TASK_KIND_ALIGN);
        task.set_job_id(id());
        *task.mutable_spec() = stored_.spec;
        task.set_psi_session(psi_->session());
        task.set_psi_index(it->second);
        for (const std::string& name : psi_->ring()) task.add_psi_ring(name);
      } else if (!psi_accepted_.contains(party)) {
        task.set_kind(v1::TASK_KIND_OFFER);
        task.set_job_id(id());
        *task.mutable_spec() = stored_.spec;
      }
      break;
    case v1::JOB_STATE_RUNNING:
      if (!p.accepted || !session_.has_value()) break;
      if (session_->phase() == fmf::ServerSession::Phase::kRoundOpen) {
        if (!session_->HasSubmitted(it->second)) {
          task.set_kind(v1::TASK_KIND_ROUND);
          task.set_job_id(id());
          task.set_round(session_->round());
          *task.mutable_spec() = stored_.spec;
        }
      } else if (!p.finished) {
        task.set_kind(v1::TASK_KIND_FINISH);
        task.set_job_id(id());
        task.set_round(session_->round());
        *task.mutable_spec() = stored_.spec;
      }
      break;
    default: break;
  }
  return task;
}

absl::StatusOr<std::optional<StoredParty>> FmfJob::ReplyOffer(int32_t idx,
                                                              const v1::OfferReply& reply) {
  if (stored_.state != v1::JOB_STATE_WAITING) {
    return absl::FailedPreconditionError("the job is no longer taking offer replies");
  }
  StoredParty& p = stored_.parties[idx];
  if (p.replied) return absl::AlreadyExistsError("offer already answered");
  if (config_.align_users && reply.accept()) {
    if (!psi_.has_value()) {
      // The first reply of an align_users job: accepted, sizes after ALIGN.
      if (!reply.alignment_pending()) {
        return absl::InvalidArgumentError(
            "job aligns users: accept with alignment_pending, send the sizes after ALIGN");
      }
      psi_accepted_.insert(p.name);
      spdlog::info("party '{}' accepted job '{}' (users to be aligned)", p.name, id());
      return std::optional<StoredParty>();
    }
    // The second: the sizes, after the intersection this server relayed.
    const std::optional<int64_t> shared = psi_->intersection_size();
    if (!shared.has_value() || reply.global_users() != *shared) {
      return absl::InvalidArgumentError(absl::StrCat(
          "field 'global_users': ", reply.global_users(), " but the aligned users number ",
          shared.has_value() ? absl::StrCat(*shared) : std::string("(not aligned yet)")));
    }
  }
  if (reply.accept()) {
    const bool vertical = config_.split == fmf::SplitKind::kVertical;
    // Bounded before anything is stored: a stored reply is what the shared
    // matrix is allocated from, at this start and at every restart.
    if (absl::Status s = CheckOfferReply(reply, vertical, config_.dim, options_.limits); !s.ok()) {
      spdlog::warn("party '{}' offer reply for job '{}' refused: {}", p.name, id(), s.message());
      return s;
    }
    // The dimension the shared matrix does not span may be 0: an HFL party
    // with a file of its own has no federation-wide user count (its users
    // are private), nor does a VFL party declare an item count it keeps.
    const int32_t other_global = vertical ? reply.global_items() : reply.global_users();
    const int32_t other_declared = vertical ? reply.items() : reply.users();
    if (reply.users() < 1 || reply.items() < 1 ||
        (other_global != 0 && other_global < other_declared) ||
        (vertical ? reply.global_users() < reply.users() : reply.global_items() < reply.items())) {
      return absl::InvalidArgumentError("fields 'users/items/global_*': inconsistent data sizes");
    }
    if (vertical && reply.users() != reply.global_users()) {
      return absl::InvalidArgumentError("field 'users': a VFL party holds every user");
    }
    if (!vertical && reply.items() != reply.global_items()) {
      return absl::InvalidArgumentError("field 'items': an HFL party holds every item");
    }
    if (config_.setting == fmf::Setting::kCoupling) {
      // The whole model is the shared matrix: bounded before it is stored.
      RETURN_IF_ERROR(BoundedCouplingLayout(reply.global_users(), reply.global_items()).status());
    }
    p.users = reply.users();
    p.items = reply.items();
    p.global_users = reply.global_users();
    p.global_items = reply.global_items();
    p.weight = vertical ? reply.items() : reply.users();
  } else {
    // Bounded and escaped before it is stored, logged or shown: it ends up
    // in every job view, and an operator's terminal prints it.
    p.refusal = reply.refusal().empty()
                    ? "refused (no reason given)"
                    : base::EscapePeerText(reply.refusal(),
                                           static_cast<size_t>(options_.limits.max_text_bytes));
    spdlog::warn("party '{}' refused job '{}': {}", p.name, id(), p.refusal);
  }
  p.replied = true;
  p.accepted = reply.accept();
  return std::optional<StoredParty>(p);
}

absl::StatusOr<std::shared_ptr<const mf::Matrix>> FmfJob::SharedFor(int32_t idx,
                                                                    int32_t round) const {
  if (!stored_.parties[idx].accepted) {
    return absl::PermissionDeniedError("the party did not accept this job");
  }
  if (stored_.state != v1::JOB_STATE_RUNNING || !session_.has_value()) {
    return absl::FailedPreconditionError("the job is not running");
  }
  if (round != session_->round()) {
    return absl::FailedPreconditionError(
        absl::StrCat("field 'round': ", round, " is not the current round ", session_->round()));
  }
  return session_->shared_snapshot();
}

absl::StatusOr<std::pair<int32_t, int32_t>> FmfJob::UploadShape(int32_t idx, int32_t round) const {
  if (!stored_.parties[idx].accepted || !session_.has_value()) {
    return absl::FailedPreconditionError("no round is open for this party");
  }
  if (round != session_->round() || session_->phase() != fmf::ServerSession::Phase::kRoundOpen) {
    return absl::FailedPreconditionError(
        absl::StrCat("field 'round': ", round, " is not the open round ", session_->round()));
  }
  return std::make_pair(static_cast<int32_t>(session_->shared().rows()),
                        static_cast<int32_t>(session_->shared().cols()));
}

absl::Status FmfJob::SubmitUpdate(int32_t idx, int32_t round, const mf::Matrix& update) {
  if (!TakesUpdatesFrom(idx)) {
    return absl::FailedPreconditionError("no round is open for this party");
  }
  RETURN_IF_ERROR(session_->SubmitUpdate(idx, round, update));
  stored_.parties[idx].last_round = round;
  return absl::OkStatus();
}

absl::StatusOr<v1::PartyRoundReport> FmfJob::CheckReport(int32_t idx,
                                                         const v1::PrivacyReport& report) const {
  if (!std::isfinite(report.epsilon_spent()) && !std::isinf(report.epsilon_spent())) {
    return absl::InvalidArgumentError("field 'epsilon_spent': NaN");
  }
  if (report.epsilon_spent() < 0) return absl::InvalidArgumentError("field 'epsilon_spent': < 0");
  if (std::isnan(report.job_epsilon()) || report.job_epsilon() < 0) {
    return absl::InvalidArgumentError("field 'job_epsilon': must be >= 0 (or +inf)");
  }
  // A report follows the party's upload of `round` or its Stage 3 (round =
  // the final one): never ahead of the job, so junk cannot grow the history.
  if (report.round() < 0 || report.round() > stored_.round) {
    return absl::InvalidArgumentError(
        absl::StrFormat("field 'round': %d is not a round of job '%s' so far (0..%d)",
                        report.round(), report.job_id(), stored_.round));
  }
  // Metrics are the party's opt-in (policy report_metrics): absent = unknown.
  if (report.has_test_mse() || report.has_test_count()) {
    if (!std::isfinite(report.test_mse()) || report.test_mse() < 0 || report.test_count() < 0) {
      return absl::InvalidArgumentError("fields 'test_mse/test_count': must be finite and >= 0");
    }
  }
  v1::PartyRoundReport history;
  history.set_party(stored_.parties[idx].name);
  history.set_job_epsilon(report.job_epsilon());
  history.set_ledger_epsilon(report.epsilon_spent());
  if (report.has_test_mse()) {
    history.set_test_mse(report.test_mse());
    history.set_test_count(report.test_count());
  }
  return history;
}

StoredParty FmfJob::PartyAfterReport(int32_t idx, const v1::PrivacyReport& report) const {
  StoredParty p = stored_.parties[idx];
  p.epsilon = report.epsilon_spent();
  if (report.finished()) {
    if (report.has_test_mse()) {
      p.test_mse = report.test_mse();
      p.test_count = report.test_count();
    }
    p.finished = true;
  }
  return p;
}

const StoredParty& FmfJob::ApplyReport(int32_t idx, int32_t round, StoredParty after,
                                       v1::PartyRoundReport history) {
  StoredParty& p = stored_.parties[idx];
  p = std::move(after);
  std::vector<v1::PartyRoundReport>& of_round = stored_.reports[round];
  std::erase_if(of_round, [&](const v1::PartyRoundReport& r) { return r.party() == p.name; });
  of_round.push_back(std::move(history));
  return p;
}

absl::Status FmfJob::PsiSend(int32_t idx, const v1::PsiSendRequest& request) {
  if (!psi_.has_value() || stored_.state != v1::JOB_STATE_WAITING) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", base::EscapePeerText(request.job_id(), 128), "' is not aligning users"));
  }
  return psi_->Send(idx, request);
}

absl::StatusOr<v1::PsiFetchResponse> FmfJob::PsiFetch(int32_t idx, const std::string& session) {
  if (!psi_.has_value() || psi_->session() != session) {
    return absl::FailedPreconditionError(absl::StrCat("job '", id(),
                                                      "' has no alignment under session '",
                                                      base::EscapePeerText(session, 128), "'"));
  }
  return psi_->Fetch(idx);
}

// ------------------------------------------------------------------ lifecycle

FmfJob::Step FmfJob::Failed(std::string why) {
  Step step;
  step.kind = Step::Kind::kFailed;
  step.error = std::move(why);
  return step;
}

FmfJob::Step FmfJob::Advance(absl::Time now, absl::FunctionRef<bool(const std::string&)> awaited) {
  if (stored_.state == v1::JOB_STATE_WAITING) {
    if (config_.align_users) {
      bool waiting = false;
      Step step = AdvanceAlignment(now, &waiting);
      if (step.kind != Step::Kind::kNone || waiting) return step;
    }
    return AdvanceOffer(now);
  }
  if (stored_.state != v1::JOB_STATE_RUNNING || !session_.has_value()) return {};
  if (session_->phase() == fmf::ServerSession::Phase::kRoundOpen) {
    return AdvanceRound(now, awaited);
  }
  return AdvanceFinish(now, awaited);
}

FmfJob::Step FmfJob::AdvanceAlignment(absl::Time now, bool* waiting) {
  *waiting = true;
  // A refusal ends it: the intersection is of every roster party's users.
  for (const StoredParty& p : stored_.parties) {
    if (p.replied && !p.accepted) {
      return Failed(absl::StrCat("align_users needs every roster party; '", p.name,
                                 "' refused: ", p.refusal));
    }
  }
  if (!psi_.has_value()) {
    if (psi_accepted_.size() < stored_.parties.size()) {
      if (now - phase_started_ < options_.offer_deadline) return {};
      std::vector<std::string> silent;
      for (const StoredParty& p : stored_.parties) {
        if (!psi_accepted_.contains(p.name)) silent.push_back(p.name);
      }
      return Failed(absl::StrCat("align_users needs every roster party; no acceptance from ",
                                 absl::StrJoin(silent, ", "), " before the offer deadline"));
    }
    std::vector<std::string> ring;
    for (const StoredParty& p : stored_.parties) ring.push_back(p.name);
    // A fresh session per run: signatures of an interrupted run cannot be
    // replayed into this one.
    const std::string session =
        absl::StrCat(id(), "/psi-", absl::Hex(rng_.NextU64(), absl::kZeroPad16));
    auto psi = PsiAlignment::Create(std::move(ring), session, options_.limits.psi_mailbox_bytes,
                                    options_.limits.psi_fetch_bytes);
    if (!psi.ok()) return Failed(std::string(psi.status().message()));
    psi_.emplace(std::move(*psi));
    phase_started_ = now;
    spdlog::info("job '{}': aligning the users of {} parties by private set intersection", id(),
                 stored_.parties.size());
    Step step;
    step.kind = Step::Kind::kChanged;
    return step;
  }
  bool all_replied = true;
  for (const StoredParty& p : stored_.parties) all_replied &= p.replied;
  if (all_replied) {
    *waiting = false;  // every party sent its sizes: start as any job
    spdlog::info("job '{}': users aligned; sets of {} users, {} shared", id(),
                 absl::StrJoin(psi_->set_sizes(), ", "), psi_->intersection_size().value_or(0));
    return {};
  }
  if (now - phase_started_ >= round_deadline_) {
    return Failed(absl::StrCat("the private set intersection did not finish within ",
                               absl::FormatDuration(round_deadline_), " (round_deadline_seconds)"));
  }
  return {};
}

FmfJob::Step FmfJob::AdvanceOffer(absl::Time now) {
  bool all_replied = true;
  for (const StoredParty& p : stored_.parties) all_replied &= p.replied;
  if (!all_replied && now - phase_started_ < options_.offer_deadline) return {};
  if (absl::Status s = StartRunning(); !s.ok()) return Failed(std::string(s.message()));
  phase_started_ = now;
  Step step;
  step.kind = Step::Kind::kStarted;
  return step;
}

absl::StatusOr<coupling::FlatLayout> FmfJob::BoundedCouplingLayout(int64_t users,
                                                                   int64_t items) const {
  ASSIGN_OR_RETURN(coupling::FlatLayout layout,
                   coupling::FlatLayout::Create(users, items, config_.dim));
  RETURN_IF_ERROR(CheckBound("coupling model values ((users + items) x dim + users^2 + items^2)",
                             layout.size(), "max_matrix_values",
                             options_.limits.max_matrix_values));
  return layout;
}

absl::StatusOr<std::optional<coupling::FlatLayout>> FmfJob::CouplingLayout() const {
  if (config_.setting != fmf::Setting::kCoupling) return std::optional<coupling::FlatLayout>();
  int64_t users = -1, items = -1;
  for (const StoredParty& p : stored_.parties) {
    if (!p.accepted) continue;
    if (users >= 0 && (p.global_users != users || p.global_items != items)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the data owners disagree on the model's size (", users, " users x ", items, " items vs ",
          p.global_users, " x ", p.global_items, " from '", p.name, "')"));
    }
    users = p.global_users;
    items = p.global_items;
  }
  if (users < 0) return absl::FailedPreconditionError("no data owner accepted");
  ASSIGN_OR_RETURN(coupling::FlatLayout layout, BoundedCouplingLayout(users, items));
  return std::optional<coupling::FlatLayout>(layout);
}

std::vector<fmf::PartyInfo> FmfJob::AveragingWeights() const {
  // The declared weights (a DP size release or a count the party declared
  // public; never a raw count, docs/privacy.md party-bytes), each capped
  // against the others' so no party can make its update the average.
  std::vector<double> declared;
  std::vector<bool> averaged;
  for (const StoredParty& p : stored_.parties) {
    declared.push_back(p.accepted ? p.weight : 1.0);  // non-acceptors never submit
    averaged.push_back(p.accepted);
  }
  const std::vector<double> capped = fmf::CappedWeights(declared, averaged);
  std::vector<fmf::PartyInfo> infos;
  for (size_t k = 0; k < stored_.parties.size(); ++k) {
    if (capped[k] < declared[k]) {
      spdlog::warn(
          "job '{}': party '{}' declared weight {} , capped at {} ({}x the median of "
          "the others')",
          id(), stored_.parties[k].name, declared[k], capped[k], fmf::kMaxWeightRatio);
    }
    infos.push_back({stored_.parties[k].name, capped[k]});
  }
  return infos;
}

absl::Status FmfJob::StartRunning() {
  std::vector<fmf::PartyInfo> infos = AveragingWeights();
  int32_t shared_rows = -1;
  int32_t accepted = 0;
  const bool vertical = config_.split == fmf::SplitKind::kVertical;
  for (const StoredParty& p : stored_.parties) {
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
  const int32_t min_parties = std::max(1, stored_.spec.min_parties());
  if (accepted < min_parties) {
    std::vector<std::string> refusals;
    for (const StoredParty& p : stored_.parties) {
      if (!p.accepted) {
        refusals.push_back(absl::StrCat(p.name, ": ", p.replied ? p.refusal : "no reply"));
      }
    }
    return absl::FailedPreconditionError(
        absl::StrCat(accepted, " of ", stored_.parties.size(), " parties accepted, ", min_parties,
                     " needed (", absl::StrJoin(refusals, "; "), ")"));
  }
  // Replies were bounded one by one; the matrix they imply is bounded too.
  RETURN_IF_ERROR(CheckBound("shared matrix values (rows x dim)",
                             int64_t{shared_rows} * config_.dim, "max_matrix_values",
                             options_.limits.max_matrix_values));
  // Same derivation as the simulator (root seed -> "server"), so a server
  // started with the seed of `fedmf train` starts from the same matrix.
  random::Csprng server_rng = random::Csprng::FromOptionalSeed(options_.seed).Fork("server");
  ASSIGN_OR_RETURN(std::optional<coupling::FlatLayout> layout, CouplingLayout());
  ASSIGN_OR_RETURN(fmf::ServerSession session,
                   layout.has_value()
                       ? fmf::ServerSession::CreateCoupling(config_, *layout, infos, server_rng)
                       : fmf::ServerSession::Create(config_, shared_rows, infos, server_rng));
  session_.emplace(std::move(session));
  stored_.state = v1::JOB_STATE_RUNNING;
  stored_.round = 0;
  stored_.shared = session_->shared();
  spdlog::info("job '{}' running with {} parties, shared matrix {}x{}", id(), accepted,
               session_->shared().rows(), session_->shared().cols());
  return absl::OkStatus();
}

FmfJob::Step FmfJob::AdvanceRound(absl::Time now,
                                  absl::FunctionRef<bool(const std::string&)> awaited) {
  fmf::ServerSession& session = *session_;
  bool waiting_for_live = false;
  bool any = false;
  for (size_t i = 0; i < stored_.parties.size(); ++i) {
    const StoredParty& p = stored_.parties[i];
    const bool submitted = session.HasSubmitted(static_cast<int32_t>(i));
    any |= submitted;
    if (p.accepted && !submitted && awaited(p.name)) waiting_for_live = true;
  }
  const bool deadline = now - phase_started_ >= round_deadline_;
  if (!any) {
    if (deadline) {
      return Failed(
          absl::StrCat("round ", session.round(), ": no party answered before the deadline"));
    }
    return {};
  }
  if (waiting_for_live && !deadline) return {};
  const double seconds = absl::ToDoubleSeconds(now - phase_started_);
  auto summary = session.CloseRound();
  if (!summary.ok()) return Failed(std::string(summary.status().message()));
  Step step;
  step.kind = Step::Kind::kRoundClosed;
  v1::RoundRecord& record = step.record;
  record.set_round(summary->round);
  record.set_seconds(seconds);
  for (int32_t k : summary->contributors) record.add_contributors(stored_.parties[k].name);
  for (int32_t k : summary->missing) {
    if (stored_.parties[k].accepted) record.add_missing(stored_.parties[k].name);
  }
  const int32_t min_parties = std::max(1, stored_.spec.min_parties());
  if (static_cast<int32_t>(summary->contributors.size()) < min_parties) {
    const size_t answered = summary->contributors.size();
    return Failed(absl::StrCat("round ", summary->round, ": only ", answered,
                               answered == 1 ? " party" : " parties", " answered, ", min_parties,
                               " needed; no answer from ",
                               record.missing().empty() ? std::string("an accepted party")
                                                        : absl::StrJoin(record.missing(), ", "),
                               " before the round deadline"));
  }
  stored_.rounds.push_back(record);
  stored_.round = session.round();
  stored_.shared = session.shared();
  spdlog::info("job '{}' round {}/{} closed in {:.2f}s: {} contributors{}", id(),
               summary->round + 1, session.total_rounds(), seconds, record.contributors_size(),
               record.missing_size() > 0
                   ? absl::StrCat(", missing ", absl::StrJoin(record.missing(), ","))
                   : std::string());
  phase_started_ = now;
  return step;
}

FmfJob::Step FmfJob::AdvanceFinish(absl::Time now,
                                   absl::FunctionRef<bool(const std::string&)> awaited) {
  // Stage 3: wait for the awaited acceptors' final reports.
  bool waiting = false;
  for (const StoredParty& p : stored_.parties) {
    if (p.accepted && !p.finished && awaited(p.name)) waiting = true;
  }
  if (waiting && now - phase_started_ < options_.finish_deadline) return {};
  stored_.state = v1::JOB_STATE_FINISHED;
  spdlog::info("job '{}' finished", id());
  Step step;
  step.kind = Step::Kind::kFinished;
  return step;
}

}  // namespace fedmf::server
