// A training job's configuration: the FMF setting, the schedule of Stage 2
// (T rounds of T' local iterations), the privacy target and the knobs of the
// local solvers. Shared verbatim by the simulator and the daemons.
#ifndef FEDMF_COMMON_FMF_JOB_CONFIG_H_
#define FEDMF_COMMON_FMF_JOB_CONFIG_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/fmf/stats_config.h"

namespace fedmf::fmf {

enum class Setting {
  kCentral,    // non-private MF on all data (one party) — the accuracy ceiling
  kLocal,      // each party alone: DP-SGD for a VFL split, non-private for HFL
  kVfl,        // VFL-SGDMF (FMF paper Section 4)
  kHfl,        // HFL-SGDMF (Section 5)
  kHflSynSgd,  // baseline: noisy item gradients averaged every iteration
  // DP collaborative coupling learning (common/coupling) over the daemons:
  // the owners hold disjoint users (a horizontal split); each round is one
  // Poisson-subsampled DP-SGD step on the whole model, which the server
  // holds and broadcasts (server_session.h). `fedmf train --setting
  // coupling` runs the same algorithm in one process (coupling/train.h).
  kCoupling,
};

// How the data is split across parties (what "local" means depends on it).
enum class SplitKind { kNone, kVertical, kHorizontal };

enum class Granularity { kRating, kUser };

// The HFL algorithm (issue #16). kPaper: the FMF paper's HFL-SGDMF (U
// pre-trained once against the initial V, V learned with U frozen, then
// fixed-length local fine-tuning). kAlternate: the same T DP rounds on V,
// split into `alternations` phases; between phases each party refits its own
// U against the received V (local, no release), and Stage 3 stops on a
// validation split of the party's own training data, keeping the federated
// model when fine-tuning does not beat it. The same V releases and noise
// (docs/privacy.md, section hfl-alternate).
// VFL: kPaper ends with kappa DP iterations on V_{F_k} (charged, the party's
// final model is DP). kAlternate runs the same T DP rounds of U, then the
// party refits its own model (U and V_{F_k}, without noise, on all its
// ratings) starting from the final U, stopping on its own validation split;
// that model never leaves the party, so nothing of it is charged and kappa
// is not run (docs/privacy.md, section vfl-finish). Other settings ignore it.
// kStatistics (issue #53): no SGD rounds at all — per alternation each party
// releases per-column sufficient statistics of its rows' fits against the
// public model, noised once among the parties (secure aggregation), and ends
// with its own model fused from its data and the others' statistics, chosen
// against its own-data model on its validation ratings (stats_config.h,
// docs/privacy.md section stats). HFL per user or per rating (biases), VFL per
// rating (biases).
enum class Algorithm { kPaper, kAlternate, kStatistics };
absl::StatusOr<Algorithm> ParseAlgorithm(const std::string& s);
std::string AlgorithmName(Algorithm a);

// The trainer of models that never leave their owner and carry no noise:
// central (the pooling baseline) and non-private local-only (TrainAlone).
// kSgd: per-rating SGD in double precision, one shuffled order per epoch
// (mf::SgdEpoch, sgd_learning_rate), rows projected with Pi. kGrid:
// mf::GridSgd — float32 rows, adaptive per-row steps, a blocked order, an
// unconstrained model from its own small start (grid_learning_rate); LIBMF's
// way of fitting, faster per epoch than LIBMF at its accuracy
// (docs/benchmarks.md). Both use sgd_l2. Federated stages ignore it.
enum class Engine { kSgd, kGrid };
absl::StatusOr<Engine> ParseEngine(const std::string& s);
std::string EngineName(Engine e);

absl::StatusOr<Setting> ParseSetting(const std::string& s);
std::string SettingName(Setting s);
absl::StatusOr<Granularity> ParseGranularity(const std::string& s);
// The granularity a job gets when none is asked for: per user for HFL and
// HFL-synSGD (the only one valid there, see GranularityRefusal), per rating
// for the others.
Granularity DefaultGranularity(Setting s);
// Why `granularity` has no valid privacy analysis for a private job of
// `setting` ("" when it has one). HFL and HFL-synSGD per rating: Stage 1
// pre-trains u_i without noise on all of user i's ratings, so removing one
// rating moves u_i and with it the Stage-2 V-gradient of every item the user
// rated; 2 R^{3/2} does not bound that (docs/privacy.md, section hfl).
std::string GranularityRefusal(Setting setting, Granularity granularity);
std::string GranularityName(Granularity g);
std::string SplitKindName(SplitKind k);

// What a DP step's Poisson sampling draws, each independently at rate q: the
// unit of the job's neighbouring relation, so that the removed rating (or
// user) is in a batch independently of everything else and the subsampled
// Gaussian's amplification holds (docs/privacy.md, section sampling).
// Per-rating jobs (VFL, DP local-only on a vertical split, coupling) sample
// ratings; per-user jobs sample users (and use all of their trimmed or
// clipped ratings).
enum class SamplingUnit { kUser, kRating };
std::string SamplingUnitName(SamplingUnit u);

// The per-user clip norm of kAlternate when the job names none: chosen on
// MovieLens 100K's own validation splits (docs/archive/results-2026.md,
// section hfl-default; C = 3 and 10 tie there).
inline constexpr double kDefaultHflClip = 3.0;

// kCoupling's defaults when the job names none: the paper's per-sample
// gradient bound C = 1/6 and coupling::CouplingOptions' learning rate.
inline constexpr double kDefaultCouplingClip = 1.0 / 6;
inline constexpr double kDefaultCouplingLearningRate = 0.01;

struct JobConfig {
  std::string job_id = "job";
  Setting setting = Setting::kHfl;
  // For kLocal: which split the parties hold (kVertical => DP-SGD on U and V;
  // kHorizontal => non-private). Derived for the other settings.
  SplitKind split = SplitKind::kHorizontal;

  int32_t rounds = 100;       // T
  int32_t local_iters = 10;   // T'
  int32_t dim = 20;           // p
  double sample_rate = 0.01;  // eta (Poisson, over DpSamplingUnit(): ratings or users)

  // Privacy target per party. epsilon = +inf means non-private (no noise).
  double epsilon = 1.0;
  double delta = 1e-5;
  // Default: per user, the one valid for the default setting (HFL).
  Granularity granularity = Granularity::kUser;
  int32_t theta = 0;  // trimming; 0 = paper default (VFL 5, HFL 10)
  // HFL and HFL-synSGD per user (issue #16). 0: the paper's bound — each user
  // trimmed to theta ratings, each rating's V-gradient bounded by
  // construction, Delta = theta * 2 R^{3/2}. C > 0: no trimming; each sampled
  // user's whole V-gradient (all of its ratings) is scaled to L2 norm <= C,
  // so Delta = C, and the size release counts users instead of ratings
  // (docs/privacy.md, section hfl-clip). Refused for vertical splits.
  // -1 (the default): the algorithm's — kAlternate clips at kDefaultHflClip,
  // kPaper trims (EffectiveClipNorm).
  double clip_norm = -1;

  int32_t vfl_finetune_iters = 100;  // kappa: VFL Stage 3 DP iterations on V

  // DP mini-batch steps (Stage 2, VFL Stage 3, DP local-only): learning rate
  // decays linearly to lr*lr_final_ratio over the first 80% of steps.
  double learning_rate = 0.0;  // 0 = setting default (see DefaultLearningRate)
  double lr_final_ratio = 0.1;

  // Non-private per-rating SGD (central, HFL Stage 1/3, HFL local-only).
  double sgd_learning_rate = 0.01;
  double sgd_l2 = 0.05;
  int32_t pretrain_epochs = 20;  // HFL Stage 1 (U only, V fixed)
  int32_t finetune_epochs = 5;   // HFL Stage 3 (U and V, no noise)
  int32_t central_epochs = 40;   // central / HFL local-only
  // Central and non-private local-only: hold out validation_fraction of each
  // user's ratings, choose the epoch count (<= central_epochs) on them, refit
  // on all. The --compare baselines set it, so the federated model (whose
  // Stage 3 stops on validation) is not compared with a weaker recipe.
  bool select_epochs_on_validation = false;
  Engine engine = Engine::kSgd;
  double grid_learning_rate = 0.1;  // kGrid's eta (mf::GridSgdOptions)

  // The default is the method that captures the most of the collaboration
  // gain (docs/results.md); kPaper reproduces the FMF paper.
  Algorithm algorithm = Algorithm::kAlternate;
  int32_t alternations = 5;           // kAlternate: phases of V (U refit between)
  double validation_fraction = 0.1;   // kAlternate (and select_epochs_on_validation): held out
  int32_t max_finetune_epochs = 100;  // kAlternate: Stage 3 cap (stops on validation)
  StatsConfig stats;                  // kStatistics

  // HFL over partners' own files: the digest ("sha256:<hex>") of the item
  // catalogue the parties map their item ids into; empty = one shared file's
  // positions (data.parties / data.index).
  std::string item_catalogue;
  // VFL over partners' own files: align users by a private set intersection.
  bool align_users = false;

  double rating_max = 5.0;  // R for clipping (top of the rating range)
  double test_fraction = 0.1;
  // kCoupling (coupling::CouplingOptions): rounds are DP steps (local_iters
  // must be 1), sample_rate is q per rating, clip_norm is C (-1: the paper's
  // 1/6), learning_rate is alpha (0: kDefaultCouplingLearningRate), and:
  double coupling_zeta = 0.01;  // the regularization of the paper's (6)
  double coupling_bound = 1;    // |S_ij|, |W_ij| clamped to this after every step
  double coupling_init = 0.1;   // U, V, S, W start uniform in (-init, init) (as the CLI)

  std::optional<uint64_t> seed;  // unset = OS entropy (production)
  // Cores for a party's local SGD epochs (mf::SgdOptions::threads). Local,
  // like `seed`: never carried by the job codec; the in-process simulator
  // gives it to every party, a daemon takes its own from its configuration.
  int32_t local_threads = 1;
  // Local too: the in-process simulator also measures each party's top-N
  // quality on its test ratings and the most-popular baseline's
  // (PartySession::EvaluateTestRanking; `fedmf train` turns it on, the
  // experiments that need only errors save its cost).
  bool measure_ranking = false;

  bool private_training() const { return epsilon < std::numeric_limits<double>::infinity(); }
  // The effective trimming threshold for per-user privacy.
  int32_t EffectiveTheta() const;
  // An HFL or HFL-synSGD job per user: where per-user clipping applies.
  bool HflPerUser() const;
  // clip_norm with -1 resolved: kDefaultHflClip for kAlternate in an HFL or
  // HFL-synSGD job per user, kDefaultCouplingClip for kCoupling, else 0.
  double EffectiveClipNorm() const;
  // Per-user clipping of whole V-gradients instead of trimming (an effective
  // clip norm > 0 in an HFL or HFL-synSGD job per user).
  bool UserClipped() const;
  // The learning rate for DP steps (explicit or the per-setting default).
  double EffectiveLearningRate() const;
  // Stage 2 schedule actually run. HFL-synSGD synchronizes after every
  // iteration, so it runs T*T' rounds of one iteration (same total steps).
  int32_t EffectiveRounds() const;
  int32_t EffectiveLocalIters() const;
  // VFL with kAlternate: Stage 3 is the party's own noise-free refit from
  // the final U instead of kappa DP iterations (Algorithm).
  bool VflLocalFinish() const;
  // Total DP iterations charged to each party (T*T' [+ kappa]).
  int64_t ChargedSteps() const;
  // What the DP steps Poisson-sample: ratings per rating (and for
  // kCoupling), users per user.
  SamplingUnit DpSamplingUnit() const;
};

// Checks ranges and combinations; the message names the field and the fix.
absl::Status ValidateJobConfig(const JobConfig& config);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_JOB_CONFIG_H_
