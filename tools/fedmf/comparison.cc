#include "tools/fedmf/comparison.h"

#include <cmath>
#include <iostream>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/fmf/gain.h"
#include "common/fmf/simulator.h"

namespace fedmf::cli {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The epsilon of the no-transfer baseline: every release of the federated
// job at this epsilon is distributed, up to a factor e^(1e-6), the same
// whatever the partners hold, so its model is one a party could compute
// alone (drawing the partners' releases as pure noise).
constexpr double kNoTransferEpsilon = 1e-6;

}  // namespace

absl::StatusOr<Comparison> RunComparison(const fmf::JobConfig& config,
                                         const data::Federation& federation, double mse_federated) {
  Comparison c;
  // Local-only: each party alone on its own train split, as private as the
  // federated model the party ends with. HFL and VFL's kAlternate end with a
  // model that never leaves the party, so their baseline is non-private SGD
  // (nothing leaves it either). The paper's VFL ends with a DP model (kappa
  // charged steps on V_{F_k}), so its baseline is DP-SGD at the job's epsilon
  // on U and V (docs/privacy.md, section vfl). The non-private baselines
  // choose their epoch count on their own validation split
  // (JobConfig::select_epochs_on_validation), as the federated model's
  // Stage 3 does.
  const bool vertical = config.split == fmf::SplitKind::kVertical;
  const bool dp_baseline = vertical && config.algorithm == fmf::Algorithm::kPaper;
  fmf::JobConfig local = config;
  local.setting = fmf::Setting::kLocal;
  local.select_epochs_on_validation = true;
  local.job_id = config.job_id + "-local";
  if (dp_baseline) {
    c.local_kind = config.private_training() ? "dp-sgd at the job's epsilon" : "non-private";
  } else {
    local.epsilon = kInf;
    c.local_kind =
        "sgd: non-private, epochs chosen on its own validation split (the strongest local "
        "recipe)";
  }
  ASSIGN_OR_RETURN(fmf::SimulationResult l, fmf::Simulate(local, federation));
  c.mse_local = l.test.mse;
  c.ranking_local = l.ranking;
  if (!dp_baseline) {
    // The recipes a party could run alone, each with nothing learned from
    // partners: plain SGD, and each federated algorithm at epsilon 1e-6 (its
    // releases carry nothing; on ML-100K HFL's Stage 1 / Stage 3 pipeline
    // alone beat plain SGD by 3.3%, which the federation "captured" at every
    // epsilon: docs/archive/results-2026.md, section hfl-no-transfer). The baseline is the
    // one with the lowest test MSE. Choosing it on validation (as before issue
    // #53) compared errors on different held-out sets with different
    // selection biases — each recipe holds out and selects on its own — and
    // on ML-100K seed 2 picked a recipe 0.044 worse on test, which credited a
    // recipe difference as collaboration. The minimum can only lower the gain
    // of the job under test, whose own hyperparameters never see the test set.
    c.mse_local_sgd = l.test.mse;
    for (const fmf::Algorithm algorithm :
         {fmf::Algorithm::kAlternate, fmf::Algorithm::kStatistics}) {
      fmf::JobConfig null = config;
      null.setting = vertical ? fmf::Setting::kVfl : fmf::Setting::kHfl;
      null.epsilon = kNoTransferEpsilon;
      null.job_id = config.job_id + "-no-transfer";
      if (config.setting != null.setting || config.algorithm != algorithm) {
        const fmf::JobConfig defaults;
        null.algorithm = algorithm;
        null.rounds = defaults.rounds;
        null.local_iters = defaults.local_iters;
        null.learning_rate = defaults.learning_rate;
        null.clip_norm = defaults.clip_norm;
        null.granularity = fmf::DefaultGranularity(null.setting);
        if (algorithm == fmf::Algorithm::kStatistics) {
          null.stats.max_colluding_parties = federation.parties.size() > 1 ? 1 : 0;
        }
      }
      ASSIGN_OR_RETURN(fmf::SimulationResult n, fmf::Simulate(null, federation));
      const bool stats = algorithm == fmf::Algorithm::kStatistics;
      (stats ? c.mse_no_transfer_stats : c.mse_no_transfer) = n.test.mse;
      if (n.test.mse < c.mse_local) {
        c.mse_local = n.test.mse;
        c.ranking_local = n.ranking;
        c.local_kind = absl::StrCat("no-transfer: the ", fmf::SettingName(null.setting), " ",
                                    fmf::AlgorithmName(algorithm),
                                    " job at epsilon 1e-6 (the strongest local recipe)");
      }
    }
  }
  // Central: all parties' train ratings pooled, non-private, the same test set.
  ASSIGN_OR_RETURN(data::Federation pooled, fmf::PoolFederation(federation));
  fmf::JobConfig central = config;
  central.setting = fmf::Setting::kCentral;
  central.split = fmf::SplitKind::kNone;
  central.epsilon = kInf;
  central.select_epochs_on_validation = true;
  central.job_id = config.job_id + "-central";
  ASSIGN_OR_RETURN(fmf::SimulationResult cen, fmf::Simulate(central, pooled));
  c.mse_central = cen.test.mse;
  c.ranking_central = cen.ranking;
  c.mse_central_sgd = c.mse_central;
  if (!dp_baseline) {
    // The pooled ratings fitted by stats' own model too (one party, no
    // noise: ALS with biases), and the better of the two on the test ratings
    // is the central baseline, as the strongest recipe is the local one
    // (issue #53): on the 70k synthetic set each party's own ALS beat
    // pooled SGD, which left the gain undefined.
    fmf::JobConfig pooled_stats = config;
    pooled_stats.setting = fmf::Setting::kHfl;
    pooled_stats.split = fmf::SplitKind::kHorizontal;
    pooled_stats.algorithm = fmf::Algorithm::kStatistics;
    pooled_stats.granularity = fmf::Granularity::kUser;
    pooled_stats.epsilon = kInf;
    pooled_stats.stats.max_colluding_parties = 0;
    pooled_stats.stats.secure_aggregation = false;
    pooled_stats.job_id = config.job_id + "-central-stats";
    ASSIGN_OR_RETURN(fmf::SimulationResult cs, fmf::Simulate(pooled_stats, pooled));
    c.mse_central_stats = cs.test.mse;
    if (cs.test.mse < c.mse_central) {
      c.mse_central = cs.test.mse;
      c.ranking_central = cs.ranking;
      c.central_kind = "stats: the pooled ratings, ALS with biases (the strongest central recipe)";
    }
  }
  c.gain_captured = fmf::GainCaptured(c.mse_local, mse_federated, c.mse_central);
  return c;
}

void AddComparisonJson(const Comparison& c, nlohmann::json& out) {
  out["mse_local"] = c.mse_local;
  out["mse_local_kind"] = c.local_kind;
  if (c.mse_local_sgd) out["mse_local_sgd"] = *c.mse_local_sgd;
  if (c.mse_no_transfer) out["mse_no_transfer"] = *c.mse_no_transfer;
  if (c.mse_no_transfer_stats) out["mse_no_transfer_stats"] = *c.mse_no_transfer_stats;
  if (c.mse_central_sgd) out["mse_central_sgd"] = *c.mse_central_sgd;
  if (c.mse_central_stats) out["mse_central_stats"] = *c.mse_central_stats;
  out["mse_central_kind"] = c.central_kind;
  out["mse_central"] = c.mse_central;
  out["gain_captured"] =
      c.gain_captured ? nlohmann::json(*c.gain_captured) : nlohmann::json(nullptr);
}

void PrintComparison(const Comparison& c, const std::string& federated, double mse_federated) {
  std::cout << absl::StrFormat(
      "\n%-22s %9s\n%-22s %9.4f\n%-22s %9.4f\n%-22s %9.4f\ngain captured %s "
      "(local - federated) / (local - central)\n",
      "same split", "test MSE", absl::StrCat("local (", c.local_kind, ")"), c.mse_local, federated,
      mse_federated,
      absl::StrCat("central (", c.central_kind.substr(0, c.central_kind.find(':')), ")"),
      c.mse_central,
      c.gain_captured ? absl::StrFormat("%.1f%%", 100 * *c.gain_captured)
                      : "undefined (central no better than local)");
  if (c.gain_captured) {
    std::cout << "one seed: whether this gain is told from seed-to-seed noise, fedmf train "
                 "--compare --repeats 3 (or more) says\n";
  }
}

nlohmann::json RankingJson(const mf::RankingMetrics& m) {
  return {{"k", m.k},       {"users", m.users},         {"hit_rate", m.hit_rate},
          {"ndcg", m.ndcg}, {"precision", m.precision}, {"recall", m.recall}};
}

namespace {
std::string RankingCells(const mf::RankingMetrics& m) {
  return absl::StrFormat("%7.4f %7.4f %7.4f %7.4f", m.hit_rate, m.ndcg, m.precision, m.recall);
}
}  // namespace

void PrintRanking(const mf::RankingMetrics& model, const mf::RankingMetrics& most_popular) {
  std::cout << absl::StrFormat(
      "top %d of the unrated items against held-out ratings in the scale's top quarter (>= 4 of "
      "1-5), %d users: HR %.4f, NDCG %.4f, precision %.4f, recall %.4f; most popular: HR %.4f, "
      "NDCG %.4f%s\n",
      model.k, model.users, model.hit_rate, model.ndcg, model.precision, model.recall,
      most_popular.hit_rate, most_popular.ndcg,
      model.ndcg > most_popular.ndcg ? "" : " (the model ranks no better than popularity)");
}

void AddRankingComparisonJson(const Comparison& c, nlohmann::json& out) {
  if (c.ranking_local.users > 0) out["ranking_local"] = RankingJson(c.ranking_local);
  if (c.ranking_central.users > 0) out["ranking_central"] = RankingJson(c.ranking_central);
}

void PrintRankingComparison(const Comparison& c, const mf::RankingMetrics& federated,
                            const mf::RankingMetrics& most_popular) {
  if (federated.users == 0) return;
  const std::string k = absl::StrCat("@", federated.k);
  std::cout << absl::StrFormat("\n%-22s %7s %7s %7s %7s\n", "same split, top-N", "HR" + k,
                               "NDCG" + k, "P" + k, "R" + k);
  if (c.ranking_local.users > 0) {
    std::cout << absl::StrFormat("%-22s %s\n", "local", RankingCells(c.ranking_local));
  }
  std::cout << absl::StrFormat("%-22s %s\n", "federated", RankingCells(federated));
  if (c.ranking_central.users > 0) {
    std::cout << absl::StrFormat("%-22s %s\n", "central (non-private)",
                                 RankingCells(c.ranking_central));
  }
  std::cout << absl::StrFormat("%-22s %s\n", "most popular", RankingCells(most_popular));
}

}  // namespace fedmf::cli
