#include "tools/fedmf/job_flags.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/config/yaml_reader.h"
#include "common/coupling/train.h"
#include "common/data/catalogue.h"
#include "common/lfl/lfl_device.h"
#include "common/lfl/lfl_simulator.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/job_file.h"

namespace fedmf::cli {

absl::Status SetLflDeviceFlags(const JobFlags& a, lfl::LflDeviceOptions& device) {
  if (!a.algorithm.empty() && a.algorithm != "paper" && a.algorithm != "whole") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--algorithm '", a.algorithm,
        "': lfl runs whole (each device's whole gradient, scaled to --lfl-clip; the default) or "
        "paper (one sampled rating per device and iteration)"));
  }
  if (!(a.lfl_clip >= 0 && std::isfinite(a.lfl_clip))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--lfl-clip ", a.lfl_clip, ": must be finite and >= 0 (0: 2 R^{3/2}, one rating's bound)"));
  }
  device.whole_gradient = a.algorithm != "paper";
  device.clip_norm = a.lfl_clip;
  device.validation_fraction = a.validation_fraction;
  return absl::OkStatus();
}

absl::StatusOr<lfl::LflConfig> LflConfigFromFlags(const JobFlags& a, double rating_max) {
  lfl::LflConfig c;
  ASSIGN_OR_RETURN(c.epsilon, ParseEpsilon(a.epsilon, "--epsilon"));
  c.delta = a.delta;
  c.iterations = a.rounds;
  c.dim = a.dim;
  c.omega = a.omega;
  c.learning_rate = a.lr;
  c.lr_final_ratio = a.lr_final_ratio;
  c.seed = a.seed;
  c.secagg_bits = a.secagg_bits;
  c.device.dim = a.dim;
  c.device.rating_max = rating_max;
  c.device.sgd_learning_rate = a.sgd_lr;
  c.device.sgd_l2 = a.sgd_l2;
  c.device.pretrain_epochs = a.pretrain_epochs;
  c.device.finetune_epochs = a.finetune_epochs;
  RETURN_IF_ERROR(SetLflDeviceFlags(a, c.device));
  return c;
}

// A coupling job over the daemons: a round is one DP step, the paper's
// 80/20 split (as fedmf train --setting coupling).
absl::Status SetCouplingFlags(const JobFlags& a, fmf::JobConfig& c) {
  if (a.coupling_sigma.has_value()) {
    return absl::InvalidArgumentError(
        "--coupling-sigma sets the noise of one process; over the daemons each party calibrates "
        "its own noise to its budget: give --epsilon instead");
  }
  c.rounds = static_cast<int32_t>(std::min<int64_t>(
      int64_t{a.coupling_epochs} * coupling::StepsPerEpoch(a.sample_rate), 1000000));
  c.local_iters = 1;
  c.clip_norm = a.coupling_clip;
  c.coupling_zeta = a.coupling_zeta;
  c.coupling_bound = a.coupling_bound;
  c.coupling_init = a.coupling_init;
  c.test_fraction = coupling::kPaperTestFraction;
  return absl::OkStatus();
}

absl::StatusOr<fmf::JobConfig> BuildJobConfig(const JobFlags& a, const data::RatingRange& range) {
  fmf::JobConfig c;
  const std::optional<fmf::Setting> setting = FmfSettingOf(a.setting);
  if (!setting) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown setting '", SettingName(a.setting),
                     "': use one of central, local, vfl, hfl, hfl-synsgd, coupling"));
  }
  c.setting = *setting;
  switch (c.setting) {
    case fmf::Setting::kCentral: c.split = fmf::SplitKind::kNone; break;
    case fmf::Setting::kVfl: c.split = fmf::SplitKind::kVertical; break;
    case fmf::Setting::kHfl:
    case fmf::Setting::kHflSynSgd:
    case fmf::Setting::kCoupling: c.split = fmf::SplitKind::kHorizontal; break;
    case fmf::Setting::kLocal:
      if (a.split == "vertical")
        c.split = fmf::SplitKind::kVertical;
      else if (a.split == "horizontal")
        c.split = fmf::SplitKind::kHorizontal;
      else
        return absl::InvalidArgumentError(
            "--setting local needs --split vertical (DP-SGD, compare with vfl) or --split "
            "horizontal (non-private, compare with hfl)");
      break;
  }
  ASSIGN_OR_RETURN(auto eps, ParseEpsilon(a.epsilon, "--epsilon"));
  c.epsilon = eps;
  if (a.granularity == "default") {
    c.granularity = fmf::DefaultGranularity(c.setting);
  } else {
    ASSIGN_OR_RETURN(auto gran, fmf::ParseGranularity(a.granularity));
    c.granularity = gran;
  }
  c.delta = a.delta;
  c.theta = a.theta;
  c.rounds = a.rounds;
  c.local_iters = a.local_iters;
  c.dim = a.dim;
  c.sample_rate = a.sample_rate;
  c.seed = a.seed;
  c.local_threads = a.threads;
  c.vfl_finetune_iters = a.kappa;
  c.learning_rate = a.lr;
  c.lr_final_ratio = a.lr_final_ratio;
  c.sgd_learning_rate = a.sgd_lr;
  c.sgd_l2 = a.sgd_l2;
  c.pretrain_epochs = a.pretrain_epochs;
  c.finetune_epochs = a.finetune_epochs;
  c.central_epochs = a.central_epochs;
  auto engine = fmf::ParseEngine(a.engine);
  if (!engine.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--engine: ", engine.status().message()));
  }
  c.engine = *engine;
  c.grid_learning_rate = a.grid_lr;
  auto algorithm = fmf::ParseAlgorithm(a.algorithm.empty() ? "alternate" : a.algorithm);
  if (!algorithm.ok()) return algorithm.status();
  c.algorithm = *algorithm;
  c.alternations = a.alternations;
  c.clip_norm = a.hfl_clip;
  c.validation_fraction = a.validation_fraction;
  c.stats = a.stats;
  // --aggregation ideal: stats sums its releases in the clear (faster);
  // secagg / secagg+ run secure aggregation among the parties in process.
  c.stats.secure_aggregation = a.aggregation != "ideal";
  c.rating_max = range.max;
  // The id `fedmf demo` submits the job under, for `fedmf train` too: a
  // party's seeded stream is forked by the job id (fmf::AdmittedJob), so the
  // same flags and --seed reproduce each other only under one id.
  c.job_id = a.job_id.empty() ? "demo-" + SettingName(a.setting) : a.job_id;
  if (c.setting == fmf::Setting::kCoupling) RETURN_IF_ERROR(SetCouplingFlags(a, c));
  RETURN_IF_ERROR(fmf::ValidateJobConfig(c));
  return c;
}

absl::StatusOr<data::LoadOptions> LoadOptionsFromFlags(const JobFlags& a) {
  data::LoadOptions options;
  if (!a.rating_range.empty()) {
    if (a.rating_min.has_value()) {
      return absl::InvalidArgumentError("give --rating-range MIN,MAX or --rating-min, not both");
    }
    const std::vector<std::string> parts = absl::StrSplit(a.rating_range, ',');
    double lo = 0, hi = 0;
    if (parts.size() != 2 || !absl::SimpleAtod(parts[0], &lo) || !absl::SimpleAtod(parts[1], &hi) ||
        !std::isfinite(lo) || !std::isfinite(hi)) {
      return absl::InvalidArgumentError(absl::StrCat("--rating-range '", a.rating_range,
                                                     "' is not MIN,MAX (e.g. --rating-range 1,5)"));
    }
    if (lo < 0 || hi <= lo) {
      return absl::InvalidArgumentError(
          absl::StrCat("--rating-range ", a.rating_range,
                       ": need 0 <= MIN < MAX (the DP sensitivity assumes "
                       "ratings in [0, MAX]; shift a scale with negative values before loading)"));
    }
    options.range = {lo, hi};
  } else if (a.rating_min.has_value()) {
    options.range.min = *a.rating_min;
  }
  return options;
}

absl::Status CheckDeclaredRange(const JobFlags& a, const data::Dataset& dataset,
                                const std::string& spec) {
  if (a.rating_range.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(data::LoadOptions declared, LoadOptionsFromFlags(a));
  if (dataset.range.min != declared.range.min || dataset.range.max != declared.range.max) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec, " has rating scale [", dataset.range.min, ", ", dataset.range.max,
                     "] but --rating-range declares [", declared.range.min, ", ",
                     declared.range.max, "] (a synthetic spec sets its own with min= and max=)"));
  }
  return absl::OkStatus();
}

std::string DeclaredRangeWarning(const JobFlags& a, const data::Dataset& dataset,
                                 const std::string& spec) {
  if (a.rating_range.empty() || dataset.ratings.empty()) return "";
  float lo = dataset.ratings[0].value, hi = lo;
  for (const data::Rating& r : dataset.ratings) {
    lo = std::min(lo, r.value);
    hi = std::max(hi, r.value);
  }
  const double declared = dataset.range.max - dataset.range.min;
  if (!(hi - lo < 0.5 * declared)) return "";
  return absl::StrFormat(
      "warning: %s: its ratings span [%g, %g], less than half of the declared scale [%g, %g] "
      "(--rating-range): the DP noise is sized for the declared scale, so a wider one than the "
      "data's costs accuracy for nothing; declare the scale your ratings use",
      spec, lo, hi, dataset.range.min, dataset.range.max);
}

absl::Status CheckFlagCombination(const JobFlags& a) {
  if (!a.catalogue.empty()) {
    if (a.setting != SettingKind::kHfl && a.setting != SettingKind::kHflSynSgd) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--catalogue is for --setting hfl or hfl-synsgd (items mapped by id); --setting ",
          SettingName(a.setting),
          a.setting == SettingKind::kVfl ? " aligns users by a private set intersection instead"
                                         : "",
          ": drop --catalogue"));
    }
    if (a.party_data.empty()) {
      return absl::InvalidArgumentError(
          "--catalogue maps the items of --party-data files; with --data the items are the "
          "data set's own: drop --catalogue, or give one --party-data per partner");
    }
  }
  return absl::OkStatus();
}

absl::Status DataErrorOf(const std::string& spec, absl::Status s) {
  return spec.rfind("synthetic", 0) == 0 ? s : DataError(std::move(s));
}

absl::StatusOr<data::Dataset> LoadWithDeclaredRange(const JobFlags& a, const std::string& spec) {
  ASSIGN_OR_RETURN(data::LoadOptions options, LoadOptionsFromFlags(a));
  // What the file holds (or that it cannot be read) is a data error (exit 4);
  // the flags above are usage (exit 2).
  absl::StatusOr<data::Dataset> dataset = data::LoadDataSpec(spec, options);
  if (!dataset.ok()) return DataErrorOf(spec, dataset.status());
  if (absl::Status s = CheckDeclaredRange(a, *dataset, spec); !s.ok()) {
    return DataErrorOf(spec, s);
  }
  if (const std::string w = DeclaredRangeWarning(a, *dataset, spec); !w.empty()) {
    std::cerr << w << "\n";
  }
  return dataset;
}

namespace {
// what to run, on which data, with which budget; how to print it.
void AddRunFlags(CLI::App* cmd, JobFlags* a, const std::vector<SettingKind>& settings) {
  AddSettingFlag(cmd, &a->setting, settings);
  cmd->add_option("--data", a->data, "movielens:PATH | csv:PATH | synthetic[:key=value,...]")
      ->capture_default_str();
  cmd->add_option("--party-data", a->party_data,
                  "train, demo: one party's own ratings file (movielens:PATH | csv:PATH), once per "
                  "party instead of --data; hfl joins them by item id, vfl by a private set "
                  "intersection of the user ids");
  cmd->add_option("--catalogue", a->catalogue,
                  "--party-data, hfl: the item catalogue (one item id per line; train defaults to "
                  "the union of the files' item ids)");
  cmd->add_option("--rating-range", a->rating_range,
                  "declared rating scale MIN,MAX of movielens/csv data (ML-100K: 1,5; default "
                  "0.5,5); every rating must lie in it, and the DP sensitivity uses MAX");
  cmd->add_option("--rating-min", a->rating_min,
                  "hua: declared minimum rating of movielens/csv data (ML-100K: 1)");
  cmd->add_option("--parties", a->parties, "number of parties s")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--epsilon", a->epsilon, "per-party epsilon, or inf")->capture_default_str();
  cmd->add_option("--delta", a->delta, "delta")->capture_default_str();
  cmd->add_option("--granularity", a->granularity,
                  "rating | user | default (user for hfl and hfl-synsgd, where "
                  "per-rating privacy is refused; rating otherwise)")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed for a reproducible run (default: OS entropy)");
  cmd->add_option("--threads", a->threads,
                  "cores for each party's local SGD epochs (blocked parallel SGD when > 1; "
                  "results depend on it; local, never sent in a job)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "print one JSON object");
  cmd->add_flag("--quiet", a->quiet, "no progress lines");
  cmd->add_option("--eval-every", a->eval_every, "test MSE every N rounds in progress lines")
      ->capture_default_str();
  cmd->add_flag("--compare", a->compare,
                "train, demo (hfl, vfl, hfl-synsgd): also run local-only and central (non-private) "
                "on the same split, in this process, and "
                "report mse_local, mse_central, gain_captured; mse_local is the better on "
                "validation of plain local SGD (mse_local_sgd) and the job at epsilon 1e-6, which "
                "learns nothing from partners (mse_no_transfer) — for vfl --algorithm paper, whose "
                "final model is DP, DP-SGD alone at the job's epsilon");
  cmd->add_option("--central-epochs", a->central_epochs,
                  "central / HFL local-only epochs (--compare: the most its validation may choose)")
      ->capture_default_str();
}

// --algorithm stats (common/fmf/stats_config.h): its knobs and the parties'
// collusion policy.
void AddStatsFlags(CLI::App* cmd, JobFlags* a) {
  fmf::StatsConfig& s = a->stats;
  cmd->add_option("--stats-dim", s.dim, "--algorithm stats: factor dimension")
      ->capture_default_str();
  cmd->add_option("--stats-releases", s.factor_releases,
                  "--algorithm stats, per user: releases of factor statistics (alternations)")
      ->capture_default_str();
  cmd->add_option("--stats-rating-releases", s.rating_releases,
                  "--algorithm stats, per rating: releases of bias statistics")
      ->capture_default_str();
  cmd->add_option("--stats-bias-share", s.bias_budget_share,
                  "--algorithm stats, per user: the first (bias) release's share of the budget")
      ->capture_default_str();
  cmd->add_option("--stats-row-clip", s.row_clip,
                  "--algorithm stats, per user: each user's whole contribution is scaled to this "
                  "L2 norm, the sensitivity")
      ->capture_default_str();
  cmd->add_option("--stats-residual-clip", s.residual_clip,
                  "--algorithm stats: released residuals clamped to +-this")
      ->capture_default_str();
  cmd->add_option("--stats-bias-clip", s.bias_clip,
                  "--algorithm stats: targets of the released rows' bias fits clamped to +-this")
      ->capture_default_str();
  cmd->add_option("--stats-bias-l2", s.bias_l2,
                  "--algorithm stats: ridge of the released rows' bias fits")
      ->capture_default_str();
  cmd->add_option("--stats-factor-l2", s.factor_l2,
                  "--algorithm stats: factor ridge of the rows' fits and the party's model (in "
                  "units of one rating)")
      ->capture_default_str();
  cmd->add_option("--stats-public-factor-l2", s.public_factor_l2,
                  "--algorithm stats: factor ridge of the public solve (in the release's weighted "
                  "units)")
      ->capture_default_str();
  cmd->add_option("--stats-col-bias-l2", s.col_bias_l2,
                  "--algorithm stats: ridge of the solved biases")
      ->capture_default_str();
  cmd->add_option("--stats-noise-ridge", s.noise_ridge,
                  "--algorithm stats: ridge per unit of the statistics' noise")
      ->capture_default_str();
  cmd->add_option("--stats-min-count", s.min_count_sigmas,
                  "--algorithm stats: public factors only for columns whose noisy weighted count "
                  "reaches this many noise sigmas")
      ->capture_default_str();
  cmd->add_option("--stats-fusion-iterations", s.fusion_iterations,
                  "--algorithm stats: ALS iterations of each party's own model")
      ->capture_default_str();
  cmd->add_option("--stats-others-weights", s.others_weights,
                  "--algorithm stats: the weights of the others' statistics each party chooses "
                  "from on its validation ratings (besides its own data alone)")
      ->delimiter(',');
  cmd->add_option("--max-colluding-parties", s.max_colluding_parties,
                  "--algorithm stats: epsilon holds against the server and up to this many other "
                  "parties (>= 1: every party sees the noisy sum); each party adds noise of "
                  "variance sigma^2 / (parties - this)")
      ->capture_default_str();
  cmd->add_flag("--charge-epsilon-alone", s.charge_epsilon_alone,
                "--algorithm stats: calibrate to epsilon_alone (every other party colluding: the "
                "party's own noise share only) instead of epsilon");
}

// VFL / HFL-SGDMF (the FMF paper) and the local-only baseline.
void AddFmfFlags(CLI::App* cmd, JobFlags* a) {
  cmd->add_option("--theta", a->theta, "per-user trimming bound (0: VFL 5, HFL 10)")
      ->capture_default_str();
  cmd->add_option("--T", a->rounds, "synchronization rounds T")->capture_default_str();
  cmd->add_option("--T-local", a->local_iters, "local iterations per round T'")
      ->capture_default_str();
  cmd->add_option("--dim", a->dim, "embedding dimension p")->capture_default_str();
  cmd->add_option(
         "--sample-rate", a->sample_rate,
         "Poisson sampling rate eta: of ratings per rating (and coupling), of users per user")
      ->capture_default_str();
  cmd->add_option("--split", a->split, "local only: vertical | horizontal");
  cmd->add_option("--vfl-split", a->vfl_split, "random | genre (ML-100K u.item)")
      ->capture_default_str();
  cmd->add_option("--kappa", a->kappa, "vfl --algorithm paper: Stage 3 DP iterations on V")
      ->capture_default_str();
  cmd->add_option("--lr", a->lr, "DP learning rate (0: setting default)")->capture_default_str();
  cmd->add_option("--lr-final-ratio", a->lr_final_ratio, "final/initial DP learning rate")
      ->capture_default_str();
  cmd->add_option("--sgd-lr", a->sgd_lr, "non-private SGD learning rate")->capture_default_str();
  cmd->add_option("--sgd-l2", a->sgd_l2, "non-private SGD L2")->capture_default_str();
  cmd->add_option("--engine", a->engine,
                  "trainer of central and non-private local-only models: sgd (per-rating, double) "
                  "or grid (float32, adaptive per-row steps, blocked order; docs/benchmarks.md)")
      ->capture_default_str();
  cmd->add_option("--grid-lr", a->grid_lr, "--engine grid: step size eta of the adaptive steps")
      ->capture_default_str();
  cmd->add_option("--pretrain-epochs", a->pretrain_epochs, "HFL Stage 1 epochs")
      ->capture_default_str();
  cmd->add_option("--finetune-epochs", a->finetune_epochs, "HFL Stage 3 epochs")
      ->capture_default_str();
  cmd->add_option("--algorithm", a->algorithm,
                  "hfl: alternate (the default: U refit locally between phases of V, per-user "
                  "clipping, Stage 3 stopped on own validation data) | paper (FMF HFL-SGDMF: "
                  "trimming, U fitted once, fixed fine-tuning); vfl: alternate (the default: "
                  "after the DP rounds of U each party refits its own model without noise, "
                  "stopped on its own validation data; nothing of it leaves the party) | paper "
                  "(--kappa charged DP iterations on V); lfl: "
                  "whole (the default: each device's whole gradient, scaled to norm --lfl-clip) | "
                  "paper (one sampled rating per device and iteration)")
      ->capture_default_str();
  cmd->add_option("--hfl-clip", a->hfl_clip,
                  "hfl, hfl-synsgd per user: every rating is used and each user's whole V-gradient "
                  "is scaled to this L2 norm, the sensitivity the noise is calibrated to (0: the "
                  "paper's bound, each user trimmed to --theta ratings; -1: the algorithm's, "
                  "alternate 3, paper 0)")
      ->capture_default_str();
  cmd->add_option("--alternations", a->alternations,
                  "hfl --algorithm alternate: phases the T rounds of V are split into")
      ->capture_default_str();
  cmd->add_option("--validation-fraction", a->validation_fraction,
                  "hfl and vfl --algorithm alternate, lfl: fraction of each party's (device's) own "
                  "training ratings held out for Stage 3's stopping rule")
      ->capture_default_str();
  AddStatsFlags(cmd, a);
}

// LFL-SGDMF over secure aggregation.
void AddLflFlags(CLI::App* cmd, LflFlags* a) {
  cmd->add_option("--lfl-clip", a->lfl_clip,
                  "lfl: the devices' round-1 gradient norm bound C, the sensitivity the noise is "
                  "calibrated to (0: 2 R^{3/2}, one rating's bound)")
      ->capture_default_str();
  cmd->add_option("--omega", a->omega, "lfl: tolerated dropout fraction")->capture_default_str();
  cmd->add_option("--dropout", a->dropout, "lfl: P1,P2 vanishing probabilities per round")
      ->capture_default_str();
  cmd->add_option("--aggregation", a->aggregation,
                  "lfl, and hfl/vfl --algorithm stats (any value but ideal: secure "
                  "aggregation among the parties, in process): secagg+ (SecAgg+ Harary graph) | "
                  "secagg (complete graph) | ideal "
                  "(plaintext sum, for comparison only) | analytic (fedmf train only: plaintext "
                  "sum of noise-free gradients plus the protocol's remaining noise drawn once per "
                  "entry, the same distribution at O(n p) work, for quality runs at scale)")
      ->check(CLI::IsMember({"secagg+", "secagg", "ideal", "analytic"}))
      ->capture_default_str();
  cmd->add_flag("--semi-honest-secagg", a->semi_honest_secagg,
                "lfl (fedmf demo): secure aggregation without the active-server defence "
                "(no signed keys, no consistency check); the demo's hosts opt out too");
  cmd->add_option("--secagg-design-dropout", a->secagg_design_dropout,
                  "lfl: the dropout fraction the secure aggregation's k and t are sized for, in "
                  "(0, omega] (0 = omega); lower is cheaper, and the aggregation then aborts (the "
                  "iteration is skipped) once more devices than that drop out")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--secagg-bits", a->secagg_bits, "lfl: fixed-point bits k of Z_{2^k} (<= 64)")
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
  cmd->add_option("--secagg-threads", a->secagg_threads,
                  "lfl: threads for the in-process devices' secure-aggregation work")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--secagg-session", a->secagg_session,
                "lfl: one secure-aggregation key setup for the whole job "
                "(docs/security.md, Sessions): later aggregations agree no keys; a device "
                "absent at the setup sits out until the session is set up anew, once more than "
                "floor(omega n / 2) devices are out of it");
}

// Hua et al.'s scenarios S1-S3.
void AddHuaFlags(CLI::App* cmd, HuaFlags* a) {
  cmd->add_option("--hua-noise", a->hua_noise, "hua-s1: gamma-norm (Theorem 1) | laplace (Lemma 1)")
      ->capture_default_str();
  cmd->add_option("--hua-gamma", a->hua_gamma, "hua: gain factor gamma")->capture_default_str();
  cmd->add_option("--hua-lambda", a->hua_lambda, "hua: user ridge lambda")->capture_default_str();
  cmd->add_option("--hua-mu", a->hua_mu, "hua: item ridge mu")->capture_default_str();
  cmd->add_option("--hua-baseline-T", a->hua_baseline_rounds,
                  "hua: iterations of the non-private baseline (and of S1's U)")
      ->capture_default_str();
  cmd->add_option("--hua-max-online", a->hua_max_online, "hua-s3: at most K users per iteration")
      ->capture_default_str();
  cmd->add_option("--hua-join", a->hua_join, "hua-s3: join probability per iteration")
      ->capture_default_str();
  cmd->add_option("--hua-leave", a->hua_leave, "hua-s3: leave probability per iteration")
      ->capture_default_str();
  cmd->add_option("--hua-initial-online", a->hua_initial_online,
                  "hua-s3: fraction online at the start (< 0: join / (join + leave))")
      ->capture_default_str();
  cmd->add_flag("--hua-paper-noise", a->hua_paper_noise,
                "hua: run the paper's mechanism as it is (no projections or trimming, its noise "
                "calibrated to --epsilon per the paper): it has no valid epsilon, so epsilon is "
                "reported as inf (a non-private run). Default: the valid variant "
                "(docs/privacy.md, section hua)");
  cmd->add_option("--hua-clip", a->hua_clip,
                  "hua (valid variant): C, the bound on one user's whole report vector per "
                  "iteration (0: the derived bound, which never binds); --theta sets the items "
                  "a user keeps (0: 100)")
      ->capture_default_str();
  cmd->add_flag("--hua-validate", a->hua_validate,
                "hua, fedmf train: for choosing hyperparameters — train on 90% of the training "
                "ratings and report every test_* field on the other 10% (the test split is not "
                "read)");
  cmd->add_option("--hua-dropout", a->hua_dropout,
                  "hua-s3: probability a selected user disconnects mid-iteration")
      ->capture_default_str();
}

// DP collaborative coupling learning.
void AddCouplingFlags(CLI::App* cmd, CouplingFlags* a) {
  cmd->add_option("--coupling-epochs", a->coupling_epochs,
                  "coupling: epochs (ceil(1/q) steps each)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--coupling-clip", a->coupling_clip,
                  "coupling: per-sample gradient norm bound C (the sensitivity)")
      ->capture_default_str();
  cmd->add_option("--coupling-zeta", a->coupling_zeta, "coupling: regularization zeta")
      ->capture_default_str();
  cmd->add_option("--coupling-bound", a->coupling_bound,
                  "coupling: |S_ij| and |W_ij| are clamped to this after each step")
      ->capture_default_str();
  cmd->add_option("--coupling-init", a->coupling_init,
                  "coupling: U, V, S, W start uniform in (-init, init) (the paper: 0.01)")
      ->capture_default_str();
  cmd->add_option("--coupling-sigma", a->coupling_sigma,
                  "coupling: the paper's absolute noise std-dev per coordinate (noise multiplier "
                  "sigma / C); overrides --epsilon, and epsilon is then reported");
}

}  // namespace

namespace {

absl::Status Read(config::YamlMap& m, const char* key, std::string* out) {
  return m.GetString(key, out);
}
absl::Status Read(config::YamlMap& m, const char* key, int32_t* out) { return m.GetInt(key, out); }
absl::Status Read(config::YamlMap& m, const char* key, double* out) {
  return m.GetDouble(key, out);
}
absl::Status Read(config::YamlMap& m, const char* key, bool* out) { return m.GetBool(key, out); }

// An LFL or Hua S3 job file (device hosts): checked as `fedmf job submit`
// checks it, then each key it sets becomes its flag's value unless the
// command line gives that flag. The hosts, catalogue size and deadlines are
// the deployment's (the demo starts its own hosts).
absl::Status ApplyDeviceJobFile(const CLI::App& cmd, SettingKind setting, JobFlags& a) {
  if (absl::Status s = LoadJobSpecFile(a.job_file).status(); !s.ok()) {
    return DataError(WithPrefix(s, "--job: "));
  }
  ASSIGN_OR_RETURN(config::YamlMap root, config::YamlMap::FromFile(a.job_file));
  if (cmd.count("--setting") > 0 && a.setting != setting) {
    return absl::InvalidArgumentError(
        absl::StrCat("--setting ", SettingName(a.setting), " contradicts the job file ", a.job_file,
                     " (setting ", SettingName(setting), "): drop one of them"));
  }
  a.setting = setting;
  config::FirstError check;
  // key -> flag, read with the key's own type into the flag's field.
  const auto from = [&](const char* key, const char* flag, auto* field) {
    if (!root.Has(key) || cmd.count(flag) > 0) return;
    check(Read(root, key, field));
    a.job_file_keys.insert(key);
  };
  from("job_id", "--job", &a.job_id);
  from("epsilon", "--epsilon", &a.epsilon);
  from("rounds", "--T", &a.rounds);
  from("dim", "--dim", &a.dim);
  if (setting == SettingKind::kLfl) {
    from("delta", "--delta", &a.delta);
    from("omega", "--omega", &a.omega);
    from("learning_rate", "--lr", &a.lr);
    from("lr_final_ratio", "--lr-final-ratio", &a.lr_final_ratio);
    from("sgd_learning_rate", "--sgd-lr", &a.sgd_lr);
    from("sgd_l2", "--sgd-l2", &a.sgd_l2);
    from("pretrain_epochs", "--pretrain-epochs", &a.pretrain_epochs);
    from("finetune_epochs", "--finetune-epochs", &a.finetune_epochs);
    from("algorithm", "--algorithm", &a.algorithm);
    from("clip_norm", "--lfl-clip", &a.lfl_clip);
    from("semi_honest_secagg", "--semi-honest-secagg", &a.semi_honest_secagg);
    from("secagg_bits", "--secagg-bits", &a.secagg_bits);
    from("secagg_design_dropout", "--secagg-design-dropout", &a.secagg_design_dropout);
    from("secagg_session", "--secagg-session", &a.secagg_session);
    bool complete = false;
    if (root.Has("complete_graph") && cmd.count("--aggregation") == 0) {
      check(root.GetBool("complete_graph", &complete));
      if (complete) a.aggregation = "secagg";
    }
  } else {
    from("gamma", "--hua-gamma", &a.hua_gamma);
    from("lambda", "--hua-lambda", &a.hua_lambda);
    from("mu", "--hua-mu", &a.hua_mu);
    from("max_online", "--hua-max-online", &a.hua_max_online);
    from("join_prob", "--hua-join", &a.hua_join);
    from("leave_prob", "--hua-leave", &a.hua_leave);
    from("initial_online", "--hua-initial-online", &a.hua_initial_online);
    from("paper_noise", "--hua-paper-noise", &a.hua_paper_noise);
  }
  if (absl::Status s = check.status(); !s.ok()) return DataError(WithPrefix(s, "--job: "));
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyJobFile(const CLI::App& cmd, JobFlags& a) {
  if (a.job_file.empty()) return absl::OkStatus();
  std::string setting;
  {
    absl::StatusOr<config::YamlMap> peek = config::YamlMap::FromFile(a.job_file);
    if (!peek.ok()) return DataError(WithPrefix(peek.status(), "--job: "));
    (void)peek->GetString("setting", &setting);  // a bad value fails below, with its line
  }
  // LFL and Hua S3 files run over device hosts: their own keys.
  if (setting == "lfl") return ApplyDeviceJobFile(cmd, SettingKind::kLfl, a);
  if (setting == "hua-s3") return ApplyDeviceJobFile(cmd, SettingKind::kHuaS3, a);
  absl::StatusOr<JobFile> read = ReadJobFile(a.job_file);
  if (!read.ok()) return DataError(WithPrefix(read.status(), "--job: "));
  const JobFile& f = *read;
  const fmf::JobConfig& c = f.config;
  // key in the file -> flag: set unless the flag was given.
  const auto from = [&](const char* key, const char* flag, const std::function<void()>& set) {
    if (f.keys.contains(key) && cmd.count(flag) == 0) set();
  };
  from("setting", "--setting", [&] { a.setting = SettingKindOf(c.setting); });
  if (cmd.count("--setting") > 0 && a.setting != SettingKindOf(c.setting)) {
    // The rest of the file describes a job of its own setting.
    return absl::InvalidArgumentError(
        absl::StrCat("--setting ", SettingName(a.setting), " contradicts the job file ", a.job_file,
                     " (setting ", fmf::SettingName(c.setting), "): drop one of them"));
  }
  a.job_id = c.job_id;  // the file's, or its timestamped default
  from("epsilon", "--epsilon",
       [&] { a.epsilon = std::isinf(c.epsilon) ? "inf" : absl::StrFormat("%.17g", c.epsilon); });
  from("delta", "--delta", [&] { a.delta = c.delta; });
  from("granularity", "--granularity",
       [&] { a.granularity = fmf::GranularityName(c.granularity); });
  from("theta", "--theta", [&] { a.theta = c.theta; });
  from("rounds", "--T", [&] { a.rounds = c.rounds; });
  from("local_iters", "--T-local", [&] { a.local_iters = c.local_iters; });
  from("dim", "--dim", [&] { a.dim = c.dim; });
  from("sample_rate", "--sample-rate", [&] { a.sample_rate = c.sample_rate; });
  from("vfl_finetune_iters", "--kappa", [&] { a.kappa = c.vfl_finetune_iters; });
  from("learning_rate", "--lr", [&] { a.lr = c.learning_rate; });
  from("lr_final_ratio", "--lr-final-ratio", [&] { a.lr_final_ratio = c.lr_final_ratio; });
  from("sgd_learning_rate", "--sgd-lr", [&] { a.sgd_lr = c.sgd_learning_rate; });
  from("sgd_l2", "--sgd-l2", [&] { a.sgd_l2 = c.sgd_l2; });
  from("pretrain_epochs", "--pretrain-epochs", [&] { a.pretrain_epochs = c.pretrain_epochs; });
  from("finetune_epochs", "--finetune-epochs", [&] { a.finetune_epochs = c.finetune_epochs; });
  from("algorithm", "--algorithm", [&] { a.algorithm = fmf::AlgorithmName(c.algorithm); });
  from("alternations", "--alternations", [&] { a.alternations = c.alternations; });
  from("validation_fraction", "--validation-fraction",
       [&] { a.validation_fraction = c.validation_fraction; });
  if (c.setting == fmf::Setting::kCoupling) {
    from("clip_norm", "--coupling-clip", [&] { a.coupling_clip = c.clip_norm; });
    from("coupling_zeta", "--coupling-zeta", [&] { a.coupling_zeta = c.coupling_zeta; });
    from("coupling_bound", "--coupling-bound", [&] { a.coupling_bound = c.coupling_bound; });
    from("coupling_init", "--coupling-init", [&] { a.coupling_init = c.coupling_init; });
  } else {
    from("clip_norm", "--hfl-clip", [&] { a.hfl_clip = c.clip_norm; });
  }
  if (!f.roster.empty() && cmd.count("--parties") == 0 && a.party_data.empty()) {
    a.parties = static_cast<int32_t>(f.roster.size());
    a.parties_given = true;
  }
  if (!f.catalogue_file.empty() && cmd.count("--catalogue") == 0 && !a.party_data.empty()) {
    a.catalogue = f.catalogue_file;
  } else if (!c.item_catalogue.empty() && a.catalogue.empty() && !a.party_data.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the job file ", a.job_file, " names the item catalogue ", c.item_catalogue,
                     ": pass --catalogue FILE, the file with that digest"));
  } else if (!c.item_catalogue.empty() && !a.catalogue.empty()) {
    auto catalogue = data::Catalogue::Load(a.catalogue);
    if (!catalogue.ok()) return DataError(WithPrefix(catalogue.status(), "--catalogue: "));
    if (catalogue->digest() != c.item_catalogue) {
      return absl::InvalidArgumentError(
          absl::StrCat("--catalogue ", a.catalogue, " is ", catalogue->digest(),
                       " but the job file ", a.job_file, " names ", c.item_catalogue,
                       " (the parties would refuse the job): use the catalogue the job names"));
    }
  }
  return absl::OkStatus();
}

void AddJobFlags(CLI::App* cmd, JobFlags* a, const std::vector<SettingKind>& settings) {
  cmd->add_option("--job", a->job_file,
                  "a job file as `fedmf job submit --spec` takes (hfl, vfl, hfl-synsgd, "
                  "coupling): its keys set the job; flags on the command line override them");
  AddRunFlags(cmd, a, settings);
  AddFmfFlags(cmd, a);
  AddLflFlags(cmd, a);
  AddHuaFlags(cmd, a);
  AddCouplingFlags(cmd, a);
}

}  // namespace fedmf::cli
