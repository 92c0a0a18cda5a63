#include "common/fmf/party_session.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/mf/clipping.h"
#include "common/mf/early_stopping.h"
#include "common/mf/grid_sgd.h"
#include "common/mf/ranking.h"
#include "common/mf/sampling.h"
#include "common/mf/sgd.h"
#include "common/mf/top_n.h"

namespace fedmf::fmf {
namespace {

// Initial embeddings aim at <u, v> near a typical mean rating (0.7 R; 3.5 for
// R = 5). The server cannot look at anybody's data to learn the true mean.
double InitScale(const JobConfig& config) {
  return mf::InitScaleFor(0.7 * config.rating_max, config.dim);
}

}  // namespace

mf::Matrix InitialSharedMatrix(const JobConfig& config, int32_t rows, random::Csprng& rng) {
  return mf::RoundedToFloat32(
      mf::RandomEmbeddings(rows, config.dim, InitScale(config), config.rating_max, rng));
}

PartySession::PartySession(const JobConfig& config, const NoisePlan& plan, double rating_offset,
                           data::PartyData data, int32_t global_items, dp::PrivacyLedger* ledger,
                           random::Csprng rng)
    : config_(config),
      plan_(plan),
      rating_offset_(rating_offset),
      data_(std::move(data)),
      global_items_(global_items),
      ledger_(ledger),
      rng_(std::move(rng)) {}

absl::StatusOr<std::unique_ptr<PartySession>> PartySession::Create(
    AdmittedJob job, data::PartyData data, int32_t global_users, int32_t global_items,
    dp::PrivacyLedger* ledger, std::optional<double> released_count) {
  const JobConfig& config = job.config();
  const NoisePlan& plan = job.plan();
  const data::RatingRange range = job.range();
  const double offset = job.rating_offset();
  if (plan.private_training && ledger == nullptr) {
    return absl::InvalidArgumentError("a private job needs a privacy ledger");
  }
  if (data.num_users() == 0 || data.num_items() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("party ", data.party, " has no users or no items"));
  }
  if (config.split == SplitKind::kVertical && data.num_users() != global_users) {
    return absl::InvalidArgumentError(absl::StrCat("VFL party ", data.party, " must hold all ",
                                                   global_users, " users, has ", data.num_users()));
  }
  if (config.split == SplitKind::kHorizontal && data.num_items() != global_items) {
    return absl::InvalidArgumentError(absl::StrCat("HFL party ", data.party, " must hold all ",
                                                   global_items, " items, has ", data.num_items()));
  }
  for (const auto* part : {&data.train, &data.test}) {
    for (const data::Rating& r : *part) {
      if (r.user < 0 || r.user >= data.num_users() || r.item < 0 || r.item >= data.num_items() ||
          !std::isfinite(r.value)) {
        return absl::InvalidArgumentError(
            absl::StrCat("party ", data.party, " has a rating outside its local index space (user ",
                         r.user, ", item ", r.item, ")"));
      }
      // Ratings are floats: allow their rounding, nothing more.
      if (r.value < range.min - 1e-6 || r.value > range.max + 1e-6) {
        return absl::InvalidArgumentError(absl::StrCat(
            "party ", data.party, " has rating ", r.value, " outside its declared range [",
            range.min, ", ", range.max, "] (data.rating_min/rating_max)"));
      }
    }
  }
  // Shift to [0, R] (offset is 0 unless the range has negative ratings).
  for (auto* part : {&data.train, &data.test}) {
    for (data::Rating& r : *part) r.value = static_cast<float>(r.value - offset);
  }
  data.range = {range.min - offset, range.max - offset};
  // TakeRng moves only the stream out of `job`; config and plan stay valid.
  std::unique_ptr<PartySession> session(new PartySession(
      config, plan, offset, std::move(data), global_items, ledger, std::move(job).TakeRng()));
  PartySession& p = *session;
  p.threads_ = job.threads();
  p.pad_stage3_ = job.pad_stage3();
  if (p.HoldsOutValidation() && p.data_.train.size() > 1) {
    // Hold out a random fraction of the party's own training ratings for
    // Stage 3's stopping rule. They are dropped from every fit (DP and not),
    // so the validation error is an honest estimate; the test set is never
    // looked at. Only this party ever sees the split.
    random::Csprng val_rng = p.rng_.Fork("validation");
    // VFL per rating: each rating independently (the neighbouring relation's
    // unit); otherwise a share of each user's own ratings from its own stream
    // (per user; the non-private baselines).
    p.validation_ = config.VflLocalFinish() && config.DpSamplingUnit() == SamplingUnit::kRating
                        ? HoldOutEachRating(p.data_.train, p.data_.num_items(),
                                            config.validation_fraction, val_rng)
                        : data::HoldOutPerUser(p.data_.train, config.validation_fraction, val_rng);
  }
  if (plan.private_training) {
    // Clamped into [0, R] and (per user) trimmed to theta: what the
    // sensitivities behind sigma assume (docs/privacy.md). R is the party's
    // own bound (AdmittedJob), the ratings already shifted into [0, R].
    random::Csprng trim_rng = p.rng_.Fork("trim");
    p.dp_train_ = BuildDpTrainingMatrix(
        p.data_.num_users(), p.data_.num_items(), p.data_.train, config.rating_max,
        config.granularity == Granularity::kUser ? plan.theta : 0, trim_rng);
  } else if (config.setting == Setting::kCentral || config.setting == Setting::kLocal) {
    // Plain SGD epochs on data_.train only: no by-user index (it would cost
    // 8 bytes per rating for nothing), just the shape.
    p.dp_train_ = mf::RatingMatrix(p.data_.num_users(), p.data_.num_items(), {});
  } else {
    p.dp_train_ = mf::RatingMatrix(p.data_.num_users(), p.data_.num_items(), p.data_.train);
  }
  if (plan.private_training) {
    RETURN_IF_ERROR(p.ReleaseCount(released_count));
  }
  const double scale = InitScale(p.config_);
  random::Csprng init_rng = p.rng_.Fork("init");
  // The shared matrix is overwritten by the server's in Pretrain; the local
  // one starts random (FMF Stage 1, step (1c)).
  p.u_ = mf::RandomEmbeddings(p.data_.num_users(), p.config_.dim, scale, p.config_.rating_max,
                              init_rng);
  p.v_ = mf::RandomEmbeddings(p.data_.num_items(), p.config_.dim, scale, p.config_.rating_max,
                              init_rng);
  return session;
}

int32_t PartySession::shared_rows() const {
  return vertical() ? data_.num_users() : data_.num_items();
}

double PartySession::weight() const {
  if (vertical()) return static_cast<double>(data_.num_items());
  if (!released_count_.has_value()) return static_cast<double>(data_.num_users());
  // Clamped only to public constants (the OfferReply field is an int32): a
  // cap at the party's own user count, as global_users is for a daemon HFL
  // party, would release n_k whenever the noise is positive (issue #54).
  const double theta = std::max(1, plan_.theta);
  return std::clamp(std::round(*released_count_ / theta), 1.0, kMaxDeclaredWeight);
}

int64_t PartySession::PreNoiseCount() const {
  if (!config_.UserClipped()) return dp_train_.nnz();
  int64_t users = 0;
  for (int32_t i = 0; i < dp_train_.num_users(); ++i) users += dp_train_.RowSize(i) > 0 ? 1 : 0;
  return users;
}

double PartySession::StepNormalizer() const {
  const double count =
      released_count_.has_value() ? *released_count_ : static_cast<double>(PreNoiseCount());
  return std::max(1.0, config_.sample_rate * count);
}

absl::Status PartySession::ReleaseCount(std::optional<double> already_released) {
  const int64_t key = CountReleaseRound(config_);
  if (already_released.has_value()) {
    bool charged = false;
    for (const dp::LedgerEntry& e : ledger_->entries()) {
      charged |= e.job_id == config_.job_id && e.round == key;
    }
    if (!charged) {
      return absl::FailedPreconditionError(
          absl::StrCat("job '", config_.job_id,
                       "': a size release is given but the ledger holds no charge "
                       "for it (round ",
                       key, ")"));
    }
    if (!std::isfinite(*already_released) || *already_released < 1) {
      return absl::InvalidArgumentError(absl::StrCat("job '", config_.job_id,
                                                     "': stored size release ", *already_released,
                                                     " is not a finite number >= 1"));
    }
    released_count_ = *already_released;
    return absl::OkStatus();
  }
  // Charge first: nothing computed from the data exists unaccounted.
  dp::LedgerEntry entry{config_.job_id,     key, 1.0, plan_.count_noise_multiplier, 1,
                        ChargeUnit(config_)};
  RETURN_IF_ERROR(ledger_->Charge(entry));
  random::Csprng count_rng = rng_.Fork("count");
  // Clamped only below, at 1, and snapped in its binade: no upper clamp, the
  // only bound on the count is the party's own size (theta * n_k, n_k), and
  // clamping at it released the exact count whenever the noise was positive
  // (issue #54).
  released_count_ =
      DrawSizeRelease(static_cast<double>(PreNoiseCount()), plan_.count_sigma, count_rng);
  return absl::OkStatus();
}

absl::Status PartySession::CheckShared(const mf::Matrix& m, const char* what) const {
  if (m.rows() != shared_rows() || m.cols() != config_.dim) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": shared matrix is ", m.rows(), "x",
                                                   m.cols(), ", expected ", shared_rows(), "x",
                                                   config_.dim));
  }
  if (!m.allFinite()) return absl::InvalidArgumentError(absl::StrCat(what, ": non-finite entry"));
  return absl::OkStatus();
}

void PartySession::AdoptShared(const mf::Matrix& m) {
  shared_matrix() = m;
  mf::ClipEmbeddings(shared_matrix(), config_.rating_max);
}

absl::Status PartySession::Charge(int64_t round, int64_t steps) {
  if (!plan_.private_training) return absl::OkStatus();
  dp::LedgerEntry entry{config_.job_id,         round, plan_.sample_rate,
                        plan_.noise_multiplier, steps, ChargeUnit(config_)};
  return ledger_->Charge(entry);
}

DpIterationSpec PartySession::Stage2Spec() const {
  DpIterationSpec spec;
  spec.sample_rate = config_.sample_rate;
  spec.sampling_unit = config_.DpSamplingUnit();
  spec.rating_max = config_.rating_max;
  // eta * the released count, not eta * nnz: the step must not depend on a
  // size outside the accounting (issue #14 finding 5).
  spec.normalizer = StepNormalizer();
  if (vertical()) {
    // VFL-SGDMF: U and V together, Delta_rating; V's step scaled by m_k/m:
    // the public split's shares of a common file, or 1 for a file of the
    // party's own (align_users: its federation is its own items alone), so
    // no private size enters the step.
    spec.update_u = spec.update_v = true;
    spec.sigma_u = spec.sigma_v = plan_.sigma_both;
    spec.v_step_scale =
        config_.setting == Setting::kVfl ? weight() / static_cast<double>(global_items_) : 1.0;
  } else {
    // HFL-SGDMF: U fixed, only V is updated and released, Delta_2,v (or the
    // per-user clip norm, whose sigma_one is z * C).
    spec.update_v = true;
    spec.sigma_v = plan_.sigma_one;
    if (config_.UserClipped()) spec.user_clip = config_.EffectiveClipNorm();
  }
  return spec;
}

double PartySession::StepLearningRate() const {
  if (config_.learning_rate > 0 || vertical() || !config_.UserClipped()) {
    return config_.EffectiveLearningRate();
  }
  return HflClippedLearningRate(StepNormalizer(), plan_.sigma_one);  // 0 when non-private
}

DpIterationSpec PartySession::VflFinetuneSpec() const {
  DpIterationSpec spec = Stage2Spec();
  spec.update_u = false;
  spec.sigma_u = 0;
  spec.sigma_v = plan_.sigma_one;  // only V moves: Delta_2,v
  spec.v_step_scale = 1.0;
  return spec;
}

void PartySession::RunDpIterations(const DpIterationSpec& spec, int64_t first_step, int64_t count) {
  const int64_t total = config_.ChargedSteps();
  mf::LearningRateSchedule schedule(StepLearningRate(), config_.lr_final_ratio,
                                    std::max<int64_t>(total, 1));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t step = std::min(first_step + i, total - 1);
    RunDpIteration(dp_train_, u_, v_, spec, schedule.At(step), rng_, scratch_);
  }
}

void PartySession::RunSgdEpochs(int32_t epochs, std::vector<data::Rating>& ratings) {
  mf::SgdOptions options;
  options.learning_rate = config_.sgd_learning_rate;
  options.l2 = config_.sgd_l2;
  options.rating_max = config_.rating_max;
  options.threads = threads_;
  for (int32_t e = 0; e < epochs; ++e) mf::SgdEpochReordering(ratings, u_, v_, options, rng_);
}

bool PartySession::alternate() const {
  return config_.algorithm == Algorithm::kAlternate && config_.setting == Setting::kHfl;
}

bool PartySession::HoldsOutValidation() const {
  const bool baseline =
      config_.select_epochs_on_validation && !config_.private_training() &&
      (config_.setting == Setting::kCentral || config_.setting == Setting::kLocal);
  return (alternate() || config_.VflLocalFinish() || baseline) && config_.validation_fraction > 0;
}

int32_t PartySession::PhaseRounds() const {
  const int32_t t = config_.EffectiveRounds();
  const int32_t a = std::clamp(config_.alternations, 1, t);
  return (t + a - 1) / a;
}

void PartySession::RunStage1PerUser(const std::string& tag) {
  // HFL Stage 1: pre-train U_k with V fixed at the server's initial value;
  // clipping, no noise, no trimming. With V fixed, u_i moves only with user
  // i's own ratings; each user also gets its own random stream, so u_i is a
  // function of (user i's ratings, V0, the seed) alone. That is what makes
  // per-user privacy hold exactly: removing a user leaves every other row of
  // U bit-for-bit unchanged (docs/privacy.md, section hfl). It is also why
  // per-rating privacy does not hold: one rating moves u_i.
  mf::SgdOptions options;
  options.learning_rate = config_.sgd_learning_rate;
  options.l2 = config_.sgd_l2;
  options.update_u = true;
  options.update_v = false;
  options.rating_max = config_.rating_max;
  // The party's own ratings as given (full precision), grouped by user.
  std::vector<std::vector<data::Rating>> by_user(static_cast<size_t>(data_.num_users()));
  for (const data::Rating& r : data_.train) by_user[static_cast<size_t>(r.user)].push_back(r);
  // Users are independent here (V is not written, u_i only by user i), so
  // threads take users i = t, t + P, ... and the result is the same for any
  // number of threads. V is only read: no race.
  const int32_t p = std::max(threads_, 1);
  auto run = [&](int32_t t) {
    for (int32_t i = t; i < data_.num_users(); i += p) {
      const std::vector<data::Rating>& mine = by_user[static_cast<size_t>(i)];
      if (mine.empty()) continue;
      random::Csprng user_rng = rng_.Fork(absl::StrCat(tag, "/", i));
      for (int32_t e = 0; e < config_.pretrain_epochs; ++e) {
        mf::SgdEpoch(mine, u_, v_, options, user_rng);
      }
    }
  };
  std::vector<std::thread> workers;
  for (int32_t t = 1; t < p; ++t) workers.emplace_back(run, t);
  run(0);
  for (auto& w : workers) w.join();
}

absl::Status PartySession::Pretrain(const mf::Matrix& initial_shared, int32_t start_round) {
  if (phase_ != Phase::kCreated) {
    return absl::FailedPreconditionError("Pretrain: the session has already started");
  }
  if (config_.setting != Setting::kVfl && config_.setting != Setting::kHfl &&
      config_.setting != Setting::kHflSynSgd) {
    return absl::FailedPreconditionError(
        absl::StrCat("Pretrain: setting ", SettingName(config_.setting), " runs with TrainAlone"));
  }
  RETURN_IF_ERROR(CheckShared(initial_shared, "Pretrain"));
  if (start_round < 0 || start_round > config_.EffectiveRounds()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Pretrain: start round ", start_round, " outside [0, ", config_.EffectiveRounds(), "]"));
  }
  AdoptShared(initial_shared);
  // HFL Stage 1: pre-train each U row with V fixed at the server's initial
  // (projected) value; clipping, no noise (nothing leaves the party).
  if (!vertical()) RunStage1PerUser();
  // Joining after round 0 (a restarted party): the rounds ahead draw from a
  // stream of their own. A session rebuilt under a local seed would
  // otherwise draw round t's noise where the first process drew round 0's,
  // and the server could difference the two releases.
  if (start_round > 0) rng_ = rng_.Fork(absl::StrCat("join/", start_round));
  next_round_ = start_round;
  phase_ = Phase::kTraining;
  return absl::OkStatus();
}

absl::StatusOr<mf::Matrix> PartySession::RunRound(int32_t round, const mf::Matrix& shared) {
  if (phase_ != Phase::kTraining) {
    return absl::FailedPreconditionError("RunRound: the session is not in Stage 2");
  }
  if (round < next_round_) {
    return absl::FailedPreconditionError(
        absl::StrCat("RunRound: round ", round, " is stale (next round is ", next_round_, ")"));
  }
  if (round >= config_.EffectiveRounds()) {
    return absl::FailedPreconditionError(
        absl::StrCat("RunRound: round ", round, " beyond T = ", config_.EffectiveRounds()));
  }
  RETURN_IF_ERROR(CheckShared(shared, "RunRound"));
  const int64_t iters = config_.EffectiveLocalIters();
  // Charge first: a refusal (over budget, replayed round) leaves the session
  // untouched, and nothing computed from the data exists unaccounted.
  RETURN_IF_ERROR(Charge(round, iters));
  steps_charged_ += plan_.private_training ? iters : 0;
  // The server is the adversary: its matrix is projected (Pi) before any
  // gradient is taken at it, so |x - <u,v>| <= R and ||row|| <= sqrt(R) hold
  // whatever it sent. An honest server's average of clipped rows is already
  // feasible and left unchanged.
  AdoptShared(shared);
  if (alternate() && round / PhaseRounds() > refit_phase_) {
    // A new phase of V: refit U against the server's (released, projected)
    // V. Per user, on the user's own ratings only, as in Stage 1, so u_i is
    // a function of (user i's ratings, released V's, seed) and the per-user
    // argument of Stage 1 carries over (docs/privacy.md, hfl-alternate).
    // Nothing is released here; a missed phase boundary refits at the next.
    refit_phase_ = round / PhaseRounds();
    RunStage1PerUser(absl::StrCat("refit", refit_phase_));
  }
  RunDpIterations(Stage2Spec(), static_cast<int64_t>(round) * iters, iters);
  next_round_ = round + 1;
  return mf::RoundedToFloat32(shared_matrix());  // what leaves the party
}

absl::Status PartySession::Finish(const mf::Matrix& final_shared) {
  if (phase_ != Phase::kTraining) {
    return absl::FailedPreconditionError("Finish: the session is not in Stage 2");
  }
  RETURN_IF_ERROR(CheckShared(final_shared, "Finish"));
  AdoptShared(final_shared);  // as in RunRound
  if (config_.VflLocalFinish()) {
    // VFL Stage 3, kAlternate: U (the released average, projected) and
    // V_{F_k} (a function of noised sums) refit on the party's own ratings
    // without noise, stopped on its validation split. Nothing of it is ever
    // released, so nothing is charged (docs/privacy.md, section vfl-finish).
    RETURN_IF_ERROR(FinetuneOnValidation(config_.max_finetune_epochs));
  } else if (vertical()) {
    // VFL Stage 3, kPaper: kappa DP iterations on V_{F_k} with U fixed; V is
    // a protected output there, so these steps are charged too.
    const int64_t kappa = config_.vfl_finetune_iters;
    if (kappa > 0) {
      RETURN_IF_ERROR(Charge(config_.EffectiveRounds(), kappa));
      steps_charged_ += plan_.private_training ? kappa : 0;
      RunDpIterations(
          VflFinetuneSpec(),
          static_cast<int64_t>(config_.EffectiveRounds()) * config_.EffectiveLocalIters(), kappa);
    }
  } else if (alternate()) {
    // The last alternation: U against the final V, then fine-tuning that
    // stops on the party's own validation split. Local only, no release.
    RunStage1PerUser("refit-final");
    RETURN_IF_ERROR(FinetuneOnValidation(config_.max_finetune_epochs));
  } else {
    // HFL Stage 3: U and V fine-tuned locally without noise on untrimmed
    // data; the result never leaves the party.
    RunSgdEpochs(config_.finetune_epochs, data_.train);
  }
  if (!ranking_rule_chosen_) ranking_rule_ = mf::DefaultRankingRule(data_.train);
  phase_ = Phase::kFinished;
  return absl::OkStatus();
}

absl::Status PartySession::FitEpochs(Engine engine, std::vector<data::Rating>& ratings,
                                     int32_t epochs, const std::function<bool()>& after_epoch) {
  if (engine == Engine::kSgd) {
    for (int32_t e = 0; e < epochs; ++e) {
      RunSgdEpochs(1, ratings);
      ++local_epochs_run_;
      if (after_epoch && after_epoch()) break;
    }
    return absl::OkStatus();
  }
  if (epochs <= 0) return absl::OkStatus();
  mf::GridSgdOptions options;
  options.learning_rate = config_.grid_learning_rate;
  options.l2 = config_.sgd_l2;
  // Unconstrained (LIBMF's model): the rows of a model nobody else sees
  // need no bound; Pi exists for the sensitivity of DP releases.
  options.rating_max = 0;
  options.threads = threads_;
  // The trainer borrows the ratings (no copy) and gives them back, reordered.
  ASSIGN_OR_RETURN(mf::GridSgd grid,
                   mf::GridSgd::Create(std::move(ratings), u_, v_, options, rng_));
  if (!after_epoch) {
    // The engine holds the model until CopyModelTo: the double-precision
    // rows need not stay resident beside it (peak memory,
    // docs/archive/benchmarks-2026.md).
    u_ = mf::Matrix(0, u_.cols());
    v_ = mf::Matrix(0, v_.cols());
  }
  for (int32_t e = 0; e < epochs; ++e) {
    grid.RunEpoch(rng_);
    ++local_epochs_run_;
    if (!after_epoch) continue;
    grid.CopyModelTo(u_, v_);  // what after_epoch looks at
    if (after_epoch()) break;
  }
  if (!after_epoch) grid.CopyModelTo(u_, v_);  // else the last epoch's copy is it
  ratings = std::move(grid).TakeRatings();
  return absl::OkStatus();
}

absl::Status PartySession::FinetuneOnValidation(int32_t max_epochs, Engine engine) {
  if (validation_.empty()) {
    RunSgdEpochs(config_.finetune_epochs, data_.train);
    return absl::OkStatus();
  }
  // Epoch 0 is the federated model itself: fine-tuning is kept only when it
  // beats it on validation; the fit waits out a rise of the validation error
  // (mf::kValidationPatience).
  mf::ErrorMetrics best = EvaluateValidation();
  const mf::Matrix start_u = u_, start_v = v_;
  // The chosen model as fit without the held-out ratings: the ranking rule is
  // chosen with it, on ratings it has not seen.
  mf::Matrix best_u = u_, best_v = v_;
  mf::EarlyStopping stopping(best.mse, mf::kValidationPatience);
  int32_t searched = 0;
  if (!stopping.ShouldStop()) {
    RETURN_IF_ERROR(FitEpochs(engine, data_.train, max_epochs, [&] {
      const mf::ErrorMetrics now = EvaluateValidation();
      if (stopping.Observe(++searched, now.mse)) {
        best = now;
        best_u = u_;
        best_v = v_;
      }
      return stopping.ShouldStop();
    }));
  }
  const int32_t best_epochs = stopping.best_epoch();
  selected_validation_ = best;
  ranking_rule_ = mf::ChooseRankingRule(best_u, best_v, data_.train, validation_, TopNOptions());
  ranking_rule_chosen_ = true;
  u_ = start_u;
  v_ = start_v;
  // Padding (a daemon's Stage 3, docs/privacy.md section stage3-timing): the
  // search and the refit each take max_epochs epochs' time whatever the
  // validation chose, so the report's timing does not show the choice.
  RETURN_IF_ERROR(PadEpochs(engine, data_.train, max_epochs - searched, true, "pad/search"));
  // The held-out ratings chose the number of epochs; the final fit runs that
  // many from the same start on every rating the party holds, the held-out
  // ones included (they are its own training data: leaving a tenth of a
  // sparse party's ratings out of the final model costs more than the
  // variance of refitting, docs/archive/results-2026.md section hfl-default).
  std::vector<data::Rating> all = TrainingRatingsWithHeldOut();
  if (best_epochs > 0) RETURN_IF_ERROR(FitEpochs(engine, all, best_epochs, nullptr));
  return PadEpochs(engine, all, max_epochs - best_epochs, false, "pad/refit");
}

absl::Status PartySession::PadEpochs(Engine engine, const std::vector<data::Rating>& ratings,
                                     int32_t epochs, bool evaluate, const std::string& tag) {
  if (!pad_stage3_ || epochs <= 0) return absl::OkStatus();
  const mf::Matrix keep_u = u_, keep_v = v_;
  std::vector<data::Rating> copy = ratings;  // FitEpochs reorders what it is given
  random::Csprng pad_rng = rng_.Fork(tag);
  std::swap(rng_, pad_rng);
  absl::Status s = FitEpochs(engine, copy, epochs, [&] {
    // The search's per-epoch work too (selected_validation_ is set by now).
    if (evaluate) (void)mf::Evaluate(validation_, u_, v_, data_.range, threads_);
    return false;
  });
  std::swap(rng_, pad_rng);
  u_ = keep_u;
  v_ = keep_v;
  return s;
}

absl::Status PartySession::TrainAlone() {
  if (phase_ != Phase::kCreated) {
    return absl::FailedPreconditionError("TrainAlone: the session has already started");
  }
  if (config_.setting != Setting::kCentral && config_.setting != Setting::kLocal) {
    return absl::FailedPreconditionError(
        absl::StrCat("TrainAlone: setting ", SettingName(config_.setting), " needs a server"));
  }
  if (plan_.private_training) {
    // Local-only on a vertical split: the same DP schedule as VFL-SGDMF
    // (T*T' steps on U and V, then kappa on V), with nobody to average with.
    const int64_t stage2 = static_cast<int64_t>(config_.rounds) * config_.local_iters;
    RETURN_IF_ERROR(Charge(0, config_.ChargedSteps()));
    steps_charged_ = config_.ChargedSteps();
    RunDpIterations(Stage2Spec(), 0, stage2);
    RunDpIterations(VflFinetuneSpec(), stage2, config_.vfl_finetune_iters);
  } else {
    if (config_.engine == Engine::kGrid) {
      // GridSgd's own start (small rows, not the mean-matched shared start).
      mf::GridSgdStartingModel(data_.train, config_.dim, rng_, u_, v_);
    }
    if (!validation_.empty()) {  // select_epochs_on_validation
      RETURN_IF_ERROR(FinetuneOnValidation(config_.central_epochs, config_.engine));
    } else {
      RETURN_IF_ERROR(FitEpochs(config_.engine, data_.train, config_.central_epochs, nullptr));
    }
  }
  if (!ranking_rule_chosen_) ranking_rule_ = mf::DefaultRankingRule(data_.train);
  phase_ = Phase::kFinished;
  return absl::OkStatus();
}

absl::StatusOr<DpScratch> PartySession::PreNoiseRelease(const std::vector<int32_t>& batch,
                                                        const mf::Matrix& shared) const {
  RETURN_IF_ERROR(CheckShared(shared, "PreNoiseRelease"));
  const DpIterationSpec spec = Stage2Spec();
  const bool ratings = spec.sampling_unit == SamplingUnit::kRating;
  const int64_t members = ratings ? dp_train_.nnz() : dp_train_.num_users();
  for (size_t k = 0; k < batch.size(); ++k) {
    if (batch[k] < 0 || batch[k] >= members || (k > 0 && batch[k] <= batch[k - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("PreNoiseRelease: ", ratings ? "rating " : "user ", batch[k],
                       " out of range or out of order"));
    }
  }
  mf::Matrix clipped = shared;
  mf::ClipEmbeddings(clipped, config_.rating_max);
  DpScratch out;
  if (vertical()) {
    ComputeDpGradients(dp_train_, batch, clipped, v_, spec, out);
  } else {
    ComputeDpGradients(dp_train_, batch, u_, clipped, spec, out);
  }
  return out;
}

std::vector<data::Rating> PartySession::TrainingRatingsWithHeldOut() const {
  std::vector<data::Rating> all = data_.train;
  all.insert(all.end(), validation_.begin(), validation_.end());
  return all;
}

mf::ErrorMetrics PartySession::EvaluateTest() const {
  return mf::Evaluate(data_.test, u_, v_, data_.range, threads_);
}

mf::ErrorMetrics PartySession::EvaluateValidation() const {
  if (validation_.empty()) return mf::ErrorMetrics{};
  if (selected_validation_.has_value()) return *selected_validation_;
  return mf::Evaluate(validation_, u_, v_, data_.range, threads_);
}

mf::ErrorMetrics PartySession::EvaluateTrain() const {
  return mf::Evaluate(data_.train, u_, v_, data_.range, threads_);
}

mf::ErrorMetrics PartySession::EvaluateTestWith(const mf::Matrix& shared) const {
  if (shared.rows() != shared_rows() || shared.cols() != config_.dim) return EvaluateTest();
  return vertical() ? mf::Evaluate(data_.test, shared, v_, data_.range, threads_)
                    : mf::Evaluate(data_.test, u_, shared, data_.range, threads_);
}

absl::StatusOr<std::vector<std::pair<int32_t, double>>> PartySession::Recommend(
    int32_t global_user, int32_t top_n, bool include_rated) const {
  if (top_n < 1) return absl::InvalidArgumentError("top_n must be >= 1");
  auto it = std::find(data_.global_users.begin(), data_.global_users.end(), global_user);
  if (it == data_.global_users.end()) {
    return absl::NotFoundError(
        absl::StrCat("user ", global_user, " is not a user of party ", data_.party));
  }
  const int32_t local = static_cast<int32_t>(it - data_.global_users.begin());
  std::unordered_set<int32_t> rated;
  if (!include_rated) {
    // Every rating the party holds for the user, the held-out ones too: a
    // recommender never proposes what the user already rated.
    for (const auto* part : {&data_.train, &validation_, &data_.test}) {
      for (const data::Rating& r : *part) {
        if (r.user == local) rated.insert(r.item);
      }
    }
  }
  // Support: every rating the party holds, as an exported model's `rated`
  // (saved_model.h), so both rank alike.
  std::vector<data::Rating> held = TrainingRatingsWithHeldOut();
  held.insert(held.end(), data_.test.begin(), data_.test.end());
  const std::vector<int32_t> support = mf::ItemSupport(held, data_.num_items());
  // Ordered by the rule (local item, rule score), shown as predicted ratings.
  std::vector<std::pair<int32_t, double>> ranked;
  ranked.reserve(data_.num_items());
  for (int32_t j = 0; j < data_.num_items(); ++j) {
    if (rated.count(j)) continue;
    ranked.emplace_back(j,
                        mf::RankingScore(ranking_rule_, u_.row(local).dot(v_.row(j)), support[j]));
  }
  mf::KeepTopN(top_n, &ranked);
  std::vector<std::pair<int32_t, double>> scored;
  for (const auto& [j, rule_score] : ranked) {
    scored.emplace_back(data_.global_items[j],
                        mf::Predict(u_, v_, local, j, data_.range) + rating_offset_);
  }
  return scored;
}

mf::RankingOptions PartySession::TopNOptions() const {
  mf::RankingOptions o;
  // The top quarter of the scale: >= 4 on 1-5 (the stored range is shifted
  // with the ratings, so this holds in their units).
  o.relevant_min = data_.range.min + 0.75 * (data_.range.max - data_.range.min);
  o.threads = threads_;
  return o;
}

mf::RankingMetrics PartySession::EvaluateTestRanking(std::optional<mf::RankingRule> rule) const {
  const std::vector<data::Rating> known = TrainingRatingsWithHeldOut();
  const std::vector<int32_t> support = mf::ItemSupport(known, data_.num_items());
  return mf::EvaluateRanking(known, data_.test, data_.num_users(), data_.num_items(),
                             mf::ModelScorer(u_, v_, support, rule.value_or(ranking_rule_)),
                             TopNOptions());
}

mf::RankingMetrics PartySession::EvaluateTestPopularity() const {
  const std::vector<data::Rating> known = TrainingRatingsWithHeldOut();
  const std::vector<int32_t> support = mf::ItemSupport(known, data_.num_items());
  return mf::EvaluateRanking(known, data_.test, data_.num_users(), data_.num_items(),
                             mf::PopularityScorer(support), TopNOptions());
}

}  // namespace fedmf::fmf
