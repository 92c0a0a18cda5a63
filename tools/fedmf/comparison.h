// fedmf train / demo --compare: the baselines of the collaboration gain
// (issue #16) on the federation's own split — local-only (the better on
// validation of plain SGD and the no-transfer job, except for the paper's
// VFL, whose DP model is compared with DP-SGD alone) and central (pooled,
// non-private) — and gain_captured.
#ifndef FEDMF_TOOLS_FEDMF_COMPARISON_H_
#define FEDMF_TOOLS_FEDMF_COMPARISON_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/fmf/job_config.h"
#include "common/mf/ranking.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {

struct Comparison {
  double mse_local = 0;
  double mse_central = 0;
  std::string local_kind;  // what "local" ran
  std::optional<double> gain_captured;
  // Non-private baselines: the two local recipes mse_local is chosen from.
  std::optional<double> mse_local_sgd, mse_no_transfer;
  // With JobConfig::measure_ranking: the baselines' top-N quality (users = 0
  // otherwise); the local one is the recipe mse_local is.
  mf::RankingMetrics ranking_local, ranking_central;
  // The same for --algorithm stats at epsilon 1e-6 (its party model alone).
  std::optional<double> mse_no_transfer_stats;
  // The two central recipes mse_central is the better of (on the test
  // ratings): pooled SGD, and the pooled ratings fitted by stats' own model
  // (one party, no noise). The paper's VFL compares with SGD alone.
  std::optional<double> mse_central_sgd, mse_central_stats;
  std::string central_kind = "sgd: the pooled ratings, non-private";
};

// Runs the baselines of `config` on `federation` and the gain of a federated
// test MSE over them. In-process and on every party's data: an evaluation
// tool, never part of a job (docs/archive/results-2026.md, section hfl-no-transfer).
absl::StatusOr<Comparison> RunComparison(const fmf::JobConfig& config,
                                         const data::Federation& federation, double mse_federated);

// mse_local, mse_local_kind, mse_local_sgd, mse_no_transfer, mse_central,
// gain_captured into `out`.
void AddComparisonJson(const Comparison& c, nlohmann::json& out);
// The same-split table on stdout; `federated` names the federated row.
void PrintComparison(const Comparison& c, const std::string& federated, double mse_federated);

// Top-N quality on held-out ratings (mf/ranking.h): one JSON object, and the
// line `fedmf train/demo` print, "top 10 on held-out ratings >= 4: ...".
nlohmann::json RankingJson(const mf::RankingMetrics& m);
void PrintRanking(const mf::RankingMetrics& model, const mf::RankingMetrics& most_popular);
// The baselines' top-N beside the federated model's and most popular's
// (nothing when not measured): ranking_local, ranking_central in JSON.
void AddRankingComparisonJson(const Comparison& c, nlohmann::json& out);
void PrintRankingComparison(const Comparison& c, const mf::RankingMetrics& federated,
                            const mf::RankingMetrics& most_popular);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_COMPARISON_H_
