#include "common/fmf/job_config.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::fmf {

absl::StatusOr<Setting> ParseSetting(const std::string& s) {
  if (s == "central") return Setting::kCentral;
  if (s == "local") return Setting::kLocal;
  if (s == "vfl") return Setting::kVfl;
  if (s == "hfl") return Setting::kHfl;
  if (s == "hfl-synsgd") return Setting::kHflSynSgd;
  if (s == "coupling") return Setting::kCoupling;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown setting '", s, "': use one of central, local, vfl, hfl, hfl-synsgd, coupling"));
}

std::string SettingName(Setting s) {
  switch (s) {
    case Setting::kCentral: return "central";
    case Setting::kLocal: return "local";
    case Setting::kVfl: return "vfl";
    case Setting::kHfl: return "hfl";
    case Setting::kHflSynSgd: return "hfl-synsgd";
    case Setting::kCoupling: return "coupling";
  }
  return "?";
}

absl::StatusOr<Granularity> ParseGranularity(const std::string& s) {
  if (s == "rating") return Granularity::kRating;
  if (s == "user") return Granularity::kUser;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown granularity '", s, "': use rating or user"));
}

absl::StatusOr<Algorithm> ParseAlgorithm(const std::string& s) {
  if (s == "paper") return Algorithm::kPaper;
  if (s == "alternate") return Algorithm::kAlternate;
  if (s == "stats") return Algorithm::kStatistics;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown algorithm '", s, "': use paper, alternate or stats"));
}

std::string AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kPaper: return "paper";
    case Algorithm::kAlternate: return "alternate";
    case Algorithm::kStatistics: return "stats";
  }
  return "?";
}

absl::StatusOr<Engine> ParseEngine(const std::string& s) {
  if (s == "sgd") return Engine::kSgd;
  if (s == "grid") return Engine::kGrid;
  return absl::InvalidArgumentError(absl::StrCat("unknown engine '", s, "': use sgd or grid"));
}

std::string EngineName(Engine e) { return e == Engine::kSgd ? "sgd" : "grid"; }

std::string GranularityName(Granularity g) { return g == Granularity::kRating ? "rating" : "user"; }

Granularity DefaultGranularity(Setting s) {
  return s == Setting::kHfl || s == Setting::kHflSynSgd ? Granularity::kUser : Granularity::kRating;
}

std::string GranularityRefusal(Setting setting, Granularity granularity) {
  if (granularity != Granularity::kRating) return "";
  if (setting != Setting::kHfl && setting != Setting::kHflSynSgd) return "";
  return absl::StrCat(
      "per-rating privacy is not available for setting ", SettingName(setting),
      ": Stage 1 pre-trains each user's embedding u_i without noise on all of that user's "
      "ratings, so removing one rating moves u_i and changes the released V-gradient on every "
      "item the user rated, which the per-rating sensitivity 2R^{3/2} does not bound "
      "(docs/privacy.md, section hfl); use --granularity user (granularity: user in a job "
      "file), which is valid and the default for ",
      SettingName(setting));
}

std::string SplitKindName(SplitKind k) {
  switch (k) {
    case SplitKind::kNone: return "none";
    case SplitKind::kVertical: return "vertical";
    case SplitKind::kHorizontal: return "horizontal";
  }
  return "?";
}

int32_t JobConfig::EffectiveTheta() const {
  if (theta > 0) return theta;
  // FMF paper Sections 4.3 / 5.3: theta = 5 for VFL with several parties,
  // 10 for HFL (all of a user's ratings sit at one party).
  return split == SplitKind::kVertical ? 5 : 10;
}

bool JobConfig::HflPerUser() const {
  return granularity == Granularity::kUser &&
         (setting == Setting::kHfl || setting == Setting::kHflSynSgd);
}

double JobConfig::EffectiveClipNorm() const {
  if (clip_norm >= 0) return clip_norm;
  if (setting == Setting::kCoupling) return kDefaultCouplingClip;
  return HflPerUser() && algorithm == Algorithm::kAlternate ? kDefaultHflClip : 0.0;
}

bool JobConfig::UserClipped() const { return HflPerUser() && EffectiveClipNorm() > 0; }

double JobConfig::EffectiveLearningRate() const {
  if (learning_rate > 0) return learning_rate;
  if (setting == Setting::kCoupling) return kDefaultCouplingLearningRate;
  // Tuned on MovieLens 100K at the paper's defaults (T=100, T'=10, p=20,
  // eta=0.01; docs/archive/results-2026.md), picking for each method the rate with the
  // lowest loss as the paper does. The mini-batch gradient is normalized by
  // the expected batch size in ratings; HFL's V-only steps on one party's
  // slice of users tolerate (and need) a much larger step than VFL's joint
  // U/V steps, whose noise lands on every user embedding.
  if (split == SplitKind::kVertical) return setting == Setting::kLocal ? 0.05 : 0.15;
  return 5.0;
}

int32_t JobConfig::EffectiveRounds() const {
  return setting == Setting::kHflSynSgd ? rounds * local_iters : rounds;
}

int32_t JobConfig::EffectiveLocalIters() const {
  return setting == Setting::kHflSynSgd ? 1 : local_iters;
}

bool JobConfig::VflLocalFinish() const {
  return setting == Setting::kVfl && algorithm == Algorithm::kAlternate;
}

SamplingUnit JobConfig::DpSamplingUnit() const {
  if (setting == Setting::kCoupling) return SamplingUnit::kRating;
  return granularity == Granularity::kRating ? SamplingUnit::kRating : SamplingUnit::kUser;
}

std::string SamplingUnitName(SamplingUnit u) {
  return u == SamplingUnit::kRating ? "rating" : "user";
}

int64_t JobConfig::ChargedSteps() const {
  const int64_t stage2 = static_cast<int64_t>(rounds) * local_iters;
  if (split == SplitKind::kVertical && !VflLocalFinish()) return stage2 + vfl_finetune_iters;
  return stage2;
}

namespace {

// kCoupling's own rules, after the common ones.
absl::Status ValidateCouplingJob(const JobConfig& c) {
  auto bad = [](const std::string& field, const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("job config field '", field, "': ", why, " (setting coupling)"));
  };
  if (c.split != SplitKind::kHorizontal) {
    return bad("split", "the data owners hold disjoint users: a horizontal split");
  }
  if (c.local_iters != 1) return bad("local_iters", "must be 1: a round is one DP step");
  if (c.granularity != Granularity::kRating) {
    return bad("granularity",
               "the coupling step bounds one rating's gradient (C): use granularity rating");
  }
  if (c.align_users || !c.item_catalogue.empty()) {
    return bad("align_users/item_catalogue",
               "the owners index users and items by positions in one shared file");
  }
  if (c.clip_norm == 0) return bad("clip_norm", "C must be > 0 (-1: the paper's 1/6)");
  if (!(c.coupling_zeta >= 0) || !std::isfinite(c.coupling_zeta)) {
    return bad("coupling_zeta", "must be >= 0 and finite");
  }
  if (!(c.coupling_bound > 0) || !std::isfinite(c.coupling_bound)) {
    return bad("coupling_bound", "must be > 0 and finite (Theorem 1 assumes 1)");
  }
  if (!(c.coupling_init >= 0 && c.coupling_init <= 1)) {
    return bad("coupling_init", "must be in [0, 1]");
  }
  return absl::OkStatus();
}

// kStatistics' own rules (its sensitivities: docs/privacy.md, section stats).
absl::Status ValidateStatsJob(const JobConfig& c) {
  auto bad = [](const std::string& field, const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("job config field '", field, "': ", why, " (algorithm stats)"));
  };
  const StatsConfig& s = c.stats;
  if (c.setting != Setting::kHfl && c.setting != Setting::kVfl) {
    return bad("setting", "runs hfl and vfl only");
  }
  if (c.setting == Setting::kVfl && c.granularity != Granularity::kRating) {
    return bad("granularity",
               "vfl releases users' biases per rating; per user each item's fit would carry a "
               "user's ratings into every other user's statistics (no proof): use granularity "
               "rating");
  }
  if (s.dim < 1 || s.dim > 256) return bad("stats.dim", "must be in [1, 256]");
  if (s.factor_releases < 0 || s.factor_releases > 100) {
    return bad("stats.factor_releases", "must be in [0, 100] (0: by epsilon)");
  }
  if (s.rating_releases < 1 || s.rating_releases > 100) {
    return bad("stats.rating_releases", "must be in [1, 100]");
  }
  if (!(s.bias_budget_share > 0 && s.bias_budget_share < 1)) {
    return bad("stats.bias_budget_share", "must be in (0, 1)");
  }
  for (auto [name, v] : {std::pair{"row_clip", s.row_clip},
                         {"residual_clip", s.residual_clip},
                         {"bias_clip", s.bias_clip},
                         {"factor_norm", s.factor_norm}}) {
    if (!(v > 0) || !std::isfinite(v)) return bad(absl::StrCat("stats.", name), "must be > 0");
  }
  for (auto [name, v] : {std::pair{"bias_l2", s.bias_l2},
                         {"factor_l2", s.factor_l2},
                         {"public_factor_l2", s.public_factor_l2},
                         {"col_bias_l2", s.col_bias_l2},
                         {"noise_ridge", s.noise_ridge},
                         {"min_count_sigmas", s.min_count_sigmas}}) {
    if (!(v >= 0) || !std::isfinite(v)) return bad(absl::StrCat("stats.", name), "must be >= 0");
  }
  if (s.fusion_iterations < 1 || s.fusion_iterations > 100) {
    return bad("stats.fusion_iterations", "must be in [1, 100]");
  }
  if (s.others_weights.empty()) return bad("stats.others_weights", "needs at least one weight");
  for (double w : s.others_weights) {
    if (!(w >= 0) || !std::isfinite(w)) return bad("stats.others_weights", "must be >= 0");
  }
  if (s.max_colluding_parties < 0) return bad("stats.max_colluding_parties", "must be >= 0");
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateJobConfig(const JobConfig& c) {
  auto bad = [](const std::string& field, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("job config field '", field, "': ", why));
  };
  if (c.job_id.empty() || c.job_id.size() > 128) return bad("job_id", "must be 1..128 characters");
  if (c.rounds < 1 || c.rounds > 1000000) return bad("rounds", "T must be in [1, 1e6]");
  if (c.alternations < 1) return bad("alternations", "must be >= 1");
  if (!(c.validation_fraction >= 0 && c.validation_fraction < 1)) {
    return bad("validation_fraction", "must be in [0, 1)");
  }
  if (c.max_finetune_epochs < 0) return bad("max_finetune_epochs", "must be >= 0");
  if (!c.item_catalogue.empty()) {
    if (c.split != SplitKind::kHorizontal) {
      return bad("item_catalogue", "only HFL jobs share items (VFL aligns users: align_users)");
    }
    const bool hex = c.item_catalogue.size() == 7 + 64 &&
                     c.item_catalogue.rfind("sha256:", 0) == 0 &&
                     c.item_catalogue.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
    if (!hex) {
      return bad("item_catalogue",
                 "must be sha256:<64 lower-case hex digits> (the digest "
                 "`fedmf catalogue digest FILE` prints) or a catalogue file");
    }
  }
  if (c.align_users && c.split != SplitKind::kVertical) {
    return bad("align_users", "only VFL jobs share users (HFL names an item_catalogue)");
  }
  if (c.local_iters < 1 || c.local_iters > 100000)
    return bad("local_iters", "T' must be in [1, 1e5]");
  if (c.dim < 1 || c.dim > 1024) return bad("dim", "p must be in [1, 1024]");
  if (!(c.sample_rate > 0 && c.sample_rate <= 1))
    return bad("sample_rate", "eta must be in (0, 1]");
  if (!(c.epsilon > 0)) return bad("epsilon", "must be > 0 (use inf for non-private)");
  if (!(c.delta > 0 && c.delta < 1)) return bad("delta", "must be in (0, 1)");
  if (c.theta < 0) return bad("theta", "must be >= 0 (0 = paper default)");
  if (!(c.clip_norm >= 0 || c.clip_norm == -1) || !std::isfinite(c.clip_norm)) {
    return bad("clip_norm",
               "must be >= 0 and finite (0 = trim to theta, the paper's bound; -1 = the "
               "algorithm's default)");
  }
  if (c.clip_norm > 0 && c.split == SplitKind::kVertical) {
    return bad("clip_norm",
               "per-user clipping is offered for hfl and hfl-synsgd only; a vertical split "
               "bounds a user's releases by trimming (theta)");
  }
  if (c.vfl_finetune_iters < 0) return bad("vfl_finetune_iters", "kappa must be >= 0");
  if (c.learning_rate < 0 || !std::isfinite(c.learning_rate))
    return bad("learning_rate", "must be >= 0");
  if (!(c.lr_final_ratio > 0 && c.lr_final_ratio <= 1))
    return bad("lr_final_ratio", "must be in (0, 1]");
  if (!(c.sgd_learning_rate > 0 && c.sgd_learning_rate < 1))
    return bad("sgd_learning_rate", "must be in (0, 1)");
  if (!(c.sgd_l2 >= 0 && c.sgd_l2 < 1)) return bad("sgd_l2", "must be in [0, 1)");
  if (!(c.grid_learning_rate > 0) || !std::isfinite(c.grid_learning_rate))
    return bad("grid_learning_rate", "must be > 0 and finite");
  if (c.pretrain_epochs < 0 || c.finetune_epochs < 0 || c.central_epochs < 0) {
    return bad("*_epochs", "epoch counts must be >= 0");
  }
  if (!(c.rating_max > 0) || !std::isfinite(c.rating_max))
    return bad("rating_max", "R must be > 0");
  if (!(c.test_fraction >= 0 && c.test_fraction < 1))
    return bad("test_fraction", "must be in [0, 1)");
  // Central and local-only jobs ignore the algorithm (the --compare
  // baselines copy the federated job's configuration).
  if (c.algorithm == Algorithm::kStatistics && c.setting != Setting::kCentral &&
      c.setting != Setting::kLocal) {
    RETURN_IF_ERROR(ValidateStatsJob(c));
  } else if (c.private_training()) {
    if (std::string why = GranularityRefusal(c.setting, c.granularity); !why.empty()) {
      return bad("granularity", why);
    }
  }
  switch (c.setting) {
    case Setting::kVfl:
      if (c.split != SplitKind::kVertical) return bad("split", "vfl needs a vertical split");
      break;
    case Setting::kHfl:
    case Setting::kHflSynSgd:
      if (c.split != SplitKind::kHorizontal) return bad("split", "hfl needs a horizontal split");
      break;
    case Setting::kCentral:
      if (c.split != SplitKind::kNone) return bad("split", "central uses no split");
      break;
    case Setting::kLocal:
      if (c.split == SplitKind::kNone)
        return bad("split", "local needs a vertical or horizontal split");
      break;
    case Setting::kCoupling: return ValidateCouplingJob(c);
  }
  return absl::OkStatus();
}

}  // namespace fedmf::fmf
