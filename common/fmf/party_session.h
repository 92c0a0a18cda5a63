// The party side of an FMF job as an explicit state machine (no I/O):
//
//   kCreated --Pretrain(initial shared)--> kTraining --RunRound(t, shared)*T-->
//   --Finish(final shared)--> kFinished
//
// or, for the baselines that need no server, kCreated --TrainAlone()--> kFinished.
//
// The party's private matrices (U_k in HFL, V_{F_k} in VFL) never leave this
// object except through Recommend/Evaluate. The only thing released is the
// shared matrix returned by RunRound, and the ledger is charged BEFORE it is
// returned: if the budget would be exceeded, nothing is released and the
// session is unchanged.
#ifndef FEDMF_COMMON_FMF_PARTY_SESSION_H_
#define FEDMF_COMMON_FMF_PARTY_SESSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/dp/ledger.h"
#include "common/fmf/admitted_job.h"
#include "common/fmf/dp_iteration.h"
#include "common/fmf/job_config.h"
#include "common/fmf/noise_plan.h"
#include "common/mf/embeddings.h"
#include "common/mf/metrics.h"
#include "common/mf/ranking.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

class PartySession {
 public:
  enum class Phase { kCreated, kTraining, kFinished };

  // Only an admitted job (admitted_job.h) starts a session: its range, R,
  // plan and randomness are the party's own. Every rating must lie in the
  // admitted range; ratings are shifted by its offset (negative ranges).
  // `ledger` is not owned and must outlive the session (the daemon persists
  // it). `global_users`/`global_items` give the shared matrix's row count.
  //
  // A private job's size release (NoisePlan::count_*) happens here: the
  // ledger is charged (key CountReleaseRound) before the noisy count exists.
  // A party that already released it for this job (restart, rejoin) passes
  // `released_count`; the ledger must then already hold that charge, and
  // nothing is drawn or charged again (a second draw would be a second,
  // unaccounted release).
  static absl::StatusOr<std::unique_ptr<PartySession>> Create(
      AdmittedJob job, data::PartyData data, int32_t global_users, int32_t global_items,
      dp::PrivacyLedger* ledger, std::optional<double> released_count = std::nullopt);

  // Rows and columns of the shared matrix (U for VFL: n x p; V for HFL: m x p).
  int32_t shared_rows() const;
  int32_t dim() const { return config_.dim; }
  // Aggregation weight the party declares to the server. VFL: m_k, the size
  // of its item catalogue (public by construction: the split of the job's
  // catalogue). HFL, private: c~ / theta, the DP size release's estimate of
  // n_k (c~ itself with per-user clipping, a count of users), rounded into
  // [1, kMaxDeclaredWeight] — public constants only; non-private: n_k.
  double weight() const;
  static constexpr double kMaxDeclaredWeight = 2147483647.0;  // OfferReply's int32
  // The size release (private jobs): the noisy count as released (at least
  // 1, no upper clamp, snapped in its binade: dp::SnapInBinadeTowardZero);
  // unset for non-private jobs.
  std::optional<double> released_count() const { return released_count_; }
  // The count before noise: ratings the DP steps train on, or with per-user
  // clipping (JobConfig::UserClipped) the users with at least one of them
  // (for the sensitivity tests; the party never sends it).
  int64_t PreNoiseCount() const;
  // eta * (released count, or PreNoiseCount when non-private), at least 1.
  double StepNormalizer() const;

  // Stage 1: initialization and local pre-computation. A party that (re)joins
  // a running job passes the round it joins at and that round's shared matrix.
  absl::Status Pretrain(const mf::Matrix& initial_shared, int32_t start_round = 0);
  // Every shared matrix received (Pretrain, RunRound, Finish) is first
  // projected onto the party's own clipping set (mf::ClipEmbeddings with the
  // party's R): the server's values never enter a gradient unclipped, so the
  // sensitivity bound holds whatever the server sends.
  // Stage 2: one synchronization round of T' DP local iterations starting
  // from the server's shared matrix; returns the party's version of it.
  // Rounds only move forward: a round the party missed (deadline, restart) is
  // skipped and costs nothing; an earlier or repeated round is refused.
  absl::StatusOr<mf::Matrix> RunRound(int32_t round, const mf::Matrix& shared);
  // Stage 3: local fine-tuning from the final shared matrix.
  absl::Status Finish(const mf::Matrix& final_shared);
  // central / local-only baselines: the whole job on this party's data alone.
  absl::Status TrainAlone();

  // The pre-noise release of one Stage-2 iteration on `batch` (of the job's
  // sampling unit: local user ids, or per rating positions in
  // dp_training_matrix()'s row order; ascending) at the server's `shared`
  // matrix (clipped as RunRound clips it): the gradient sums RunRound would
  // noise, with the party's current private matrix. For the sensitivity
  // tests; consumes no randomness, charges nothing.
  absl::StatusOr<DpScratch> PreNoiseRelease(const std::vector<int32_t>& batch,
                                            const mf::Matrix& shared) const;
  // Which matrices a Stage-2 iteration updates and their noise.
  DpIterationSpec Stage2Spec() const;
  // The initial learning rate of the DP steps: the job's, or when it names
  // none the setting's default (JobConfig::EffectiveLearningRate), or with
  // per-user clipping HflClippedLearningRate of this party's normaliser.
  double StepLearningRate() const;

  // The ratings the DP steps read (clamped; per user trimmed to theta; the
  // validation split held out), which Stage2Spec()'s batches sample.
  const mf::RatingMatrix& dp_training_matrix() const { return dp_train_; }

  Phase phase() const { return phase_; }
  int32_t next_round() const { return next_round_; }
  int64_t steps_charged() const { return steps_charged_; }
  // Local SGD epochs run by the validation-chosen fine-tuning (Stage 3 of
  // kAlternate), the padding included: with AdmittedJob::pad_stage3 it is
  // 2 x max_finetune_epochs whatever the validation chose (tests, logs).
  int64_t local_epochs_run() const { return local_epochs_run_; }

  // Test / train error with the party's current matrices; `shared` (when
  // given) replaces the shared matrix, for progress reports during Stage 2.
  mf::ErrorMetrics EvaluateTest() const;
  mf::ErrorMetrics EvaluateTrain() const;
  mf::ErrorMetrics EvaluateTestWith(const mf::Matrix& shared) const;
  // Error on the party's own validation split (Algorithm::kAlternate; empty
  // metrics otherwise): held out of every fit, never the test set. After
  // Finish: the error of the model Stage 3 chose, measured before its final
  // refit that adds the held-out ratings (so it stays an honest estimate).
  mf::ErrorMetrics EvaluateValidation() const;

  // Top-N quality on the test ratings (docs/results.md, section ranking):
  // the model ranked by ranking_rule(), and the most-popular baseline (items
  // by how many of the party's training ratings they have). Relevant: a test
  // rating in the top quarter of the range (>= 4 on 1-5). Candidates: the
  // items the user has no training or held-out rating for.
  // `rule` replaces ranking_rule() (e.g. {0, 0, 0}: the prediction alone).
  mf::RankingMetrics EvaluateTestRanking(std::optional<mf::RankingRule> rule = std::nullopt) const;
  mf::RankingMetrics EvaluateTestPopularity() const;
  // How Recommend orders items: the prediction, pulled toward the mean for
  // items with few ratings and nudged by popularity, with the weights chosen
  // on the party's validation split by NDCG@10 with the model Stage 3 chose
  // (before its refit adds those ratings); without a validation split,
  // mf::DefaultRankingRule.
  const mf::RankingRule& ranking_rule() const { return ranking_rule_; }

  // Top-N items for a local user, best first, ordered by ranking_rule():
  // (global item id, predicted rating). Items the user rated (training or
  // held-out ratings) are left out unless `include_rated`.
  absl::StatusOr<std::vector<std::pair<int32_t, double>>> Recommend(
      int32_t global_user, int32_t top_n, bool include_rated = false) const;

  // The party's data; data().train excludes the held-out ratings.
  const data::PartyData& data() const { return data_; }
  // Every training rating the party holds: data().train plus those held out
  // for Stage 3's stopping rule (kAlternate), e.g. for what counts as rated.
  std::vector<data::Rating> TrainingRatingsWithHeldOut() const;
  const mf::Matrix& user_embeddings() const { return u_; }
  const mf::Matrix& item_embeddings() const { return v_; }
  // Moves the matrices out for a finished run's result instead of copying
  // them (12 MB at 67k users x 10.7k items, p = 20). The session keeps empty
  // matrices: evaluate before, do not train or evaluate after.
  std::pair<mf::Matrix, mf::Matrix> TakeEmbeddings() { return {std::move(u_), std::move(v_)}; }
  // Added to every clamped prediction (a negative scale's shift).
  double rating_offset() const { return rating_offset_; }

 private:
  PartySession(const JobConfig& config, const NoisePlan& plan, double rating_offset,
               data::PartyData data, int32_t global_items, dp::PrivacyLedger* ledger,
               random::Csprng rng);

  bool vertical() const { return config_.split == SplitKind::kVertical; }
  mf::Matrix& shared_matrix() { return vertical() ? u_ : v_; }
  const mf::Matrix& shared_matrix() const { return vertical() ? u_ : v_; }
  absl::Status CheckShared(const mf::Matrix& m, const char* what) const;
  // Takes the server's matrix as the shared one, projected onto the clipping set.
  void AdoptShared(const mf::Matrix& m);
  absl::Status Charge(int64_t round, int64_t steps);
  // The size release (Create): charge, draw, clamp, snap; or adopt an earlier one.
  absl::Status ReleaseCount(std::optional<double> already_released);
  // T' (or kappa) DP iterations; `first_step` indexes the lr schedule.
  void RunDpIterations(const DpIterationSpec& spec, int64_t first_step, int64_t count);
  // Non-private epochs on U and V over `ratings`, which come back reordered
  // (mf::SgdEpochReordering). Only after the party's last release: a
  // training set's order feeds Stage 1's per-user streams.
  void RunSgdEpochs(int32_t epochs, std::vector<data::Rating>& ratings);
  // Fits each U row with V fixed, per user (Stage 1; the alternate
  // algorithm's refits). `tag` names the per-user streams of this fit.
  void RunStage1PerUser(const std::string& tag = "stage1");
  // Algorithm::kAlternate in an HFL job.
  bool alternate() const;
  // kAlternate: rounds per phase of V, ceil(T / alternations).
  int32_t PhaseRounds() const;
  // kAlternate Stage 3: fine-tuning epochs while validation error improves
  // choose how many (0: the federated model); then that many epochs from the
  // federated model over training and held-out ratings together.
  // SGD on U and V for the epoch count (<= max_epochs, 0 = keep the model)
  // that does best on the validation split, then that many from the same
  // start on every training rating. Federated Stage 3 is always kSgd.
  absl::Status FinetuneOnValidation(int32_t max_epochs, Engine engine = Engine::kSgd);
  // pad_stage3: `epochs` more epochs of the same work on copies of the model,
  // of `ratings` and of the stream (forked by `tag`), so the time spent does
  // not tell how many real ones ran; nothing of them is kept.
  absl::Status PadEpochs(Engine engine, const std::vector<data::Rating>& ratings, int32_t epochs,
                         bool evaluate, const std::string& tag);
  // Up to `epochs` epochs on U and V over `ratings` with `engine` (kGrid
  // borrows the vector and gives it back reordered: same ratings, no copy).
  // After each epoch `after_epoch`, if set, sees the model in u_ / v_ and
  // returns true to stop.
  absl::Status FitEpochs(Engine engine, std::vector<data::Rating>& ratings, int32_t epochs,
                         const std::function<bool()>& after_epoch);
  bool HoldsOutValidation() const;
  // k = 10, relevant = the top quarter of the range, this session's threads.
  mf::RankingOptions TopNOptions() const;
  DpIterationSpec VflFinetuneSpec() const;

  JobConfig config_;
  NoisePlan plan_;
  double rating_offset_;  // subtracted from every rating (negative ranges)
  data::PartyData data_;  // ratings and range already shifted
  int32_t global_items_;
  dp::PrivacyLedger* ledger_;
  random::Csprng rng_;
  int32_t threads_ = 1;           // cores for local SGD epochs (AdmittedJob::threads)
  bool pad_stage3_ = false;       // AdmittedJob::pad_stage3
  int64_t local_epochs_run_ = 0;  // every epoch FitEpochs ran, padding included

  // By user: the ratings the DP (and, at epsilon = inf, noise-free) Stage-2
  // iterations read — clamped and trimmed to theta for per-user DP, else
  // data_.train as is. Central and local non-private sessions run plain
  // epochs on data_.train and keep only its shape here.
  mf::RatingMatrix dp_train_;
  mf::Matrix u_;
  mf::Matrix v_;
  DpScratch scratch_;
  Phase phase_ = Phase::kCreated;
  int32_t next_round_ = 0;
  int64_t steps_charged_ = 0;
  std::optional<double> released_count_;
  std::vector<data::Rating> validation_;  // kAlternate: own held-out ratings
  // kAlternate after Finish: the chosen model's validation error, measured
  // before the final refit that trains on the held-out ratings too.
  std::optional<mf::ErrorMetrics> selected_validation_;
  mf::RankingRule ranking_rule_;  // FinetuneOnValidation chooses it
  bool ranking_rule_chosen_ = false;
  int32_t refit_phase_ = 0;  // kAlternate: last phase U was refit for
};

// The initial shared matrix the server broadcasts (entries uniform, clipped,
// at float32 precision like every shared matrix).
mf::Matrix InitialSharedMatrix(const JobConfig& config, int32_t rows, random::Csprng& rng);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_PARTY_SESSION_H_
