// The whole federation in one process: one ServerSession and one
// PartySession per party exchanging the same messages the daemons carry.
#ifndef FEDMF_COMMON_FMF_SIMULATOR_H_
#define FEDMF_COMMON_FMF_SIMULATOR_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "common/fmf/noise_plan.h"
#include "common/fmf/stats_plan.h"
#include "common/mf/metrics.h"
#include "common/mf/ranking.h"

namespace fedmf::fmf {

struct FederationOptions {
  int32_t parties = 1;
  // VFL item split: "random", or "genre" (needs item_genres).
  std::string vfl_split = "random";
  const std::vector<std::vector<int>>* item_genres = nullptr;
  uint64_t split_seed = 1;
  double test_fraction = 0.1;
};

// Splits `dataset` as `config` needs (none / vertical / horizontal). The
// data set is consumed — pass it with std::move when done with it: a central
// split keeps the ratings' storage instead of copying them.
absl::StatusOr<data::Federation> BuildFederation(const JobConfig& config, data::Dataset dataset,
                                                 const FederationOptions& options);

// As BuildFederation, for data loaded from `spec`; a genre split finds
// MovieLens 100K's u.item next to the ratings file.
absl::StatusOr<data::Federation> BuildFederationFromSpec(const JobConfig& config,
                                                         data::Dataset dataset,
                                                         const std::string& spec,
                                                         FederationOptions options);

struct PartyResult {
  int32_t party = 0;
  int32_t users = 0;
  int32_t items = 0;
  int64_t train_ratings = 0;
  mf::ErrorMetrics test;
  mf::ErrorMetrics train;
  mf::ErrorMetrics validation;  // own held-out ratings (Algorithm::kAlternate)
  double epsilon = 0;           // spent by this party (inf for non-private settings)
  int64_t steps = 0;            // DP steps charged
  double learning_rate = 0;     // initial DP learning rate (PartySession::StepLearningRate)
  // The party's final model (rows in its local user / item order), kept for
  // fedmf train --save-model; predictions are clamped to the party data's
  // range plus rating_offset.
  mf::Matrix user_embeddings, item_embeddings;
  double rating_offset = 0;
  // How the party ranks recommendations (PartySession::ranking_rule), and
  // with JobConfig::measure_ranking its top-N quality on the test ratings
  // and the most-popular baseline's (users = 0 when not measured).
  mf::RankingRule ranking_rule;
  mf::RankingMetrics ranking, popularity;
  mf::RankingMetrics ranking_by_prediction;  // the same model ranked by its prediction alone
  // Algorithm::kStatistics: the model the party's validation chose — "own"
  // (its data alone) or "federated" (fused with the others' statistics at
  // weight others_weight).
  std::string model_kind;
  double others_weight = 0;
};

struct RoundProgress {
  int32_t round = 0;  // 1-based rounds completed
  int32_t total_rounds = 0;
  double seconds = 0;              // since the start
  double epsilon = 0;              // max over parties, so far
  std::optional<double> test_mse;  // with the current shared matrix
  // Per party (federation order): its ledger's epsilon so far, and with
  // test_mse, its own test MSE with the current shared matrix.
  std::vector<double> party_epsilon;
  std::vector<double> party_test_mse;
};

struct SimulationResult {
  JobConfig config;
  NoisePlan plan;
  std::vector<PartyResult> parties;
  mf::ErrorMetrics test;  // all parties' test ratings pooled
  mf::ErrorMetrics train;
  mf::ErrorMetrics validation;  // pooled over parties; count 0 when none held out
  // Pooled over parties (weighted by measured users) when measured.
  mf::RankingMetrics ranking, popularity, ranking_by_prediction;
  double epsilon = 0;  // max over parties (parallel composition)
  // VFL per user: a user's ratings sit at every party, so removing the user
  // changes all s releases; the parties' RDP curves composed (not the FMF
  // paper's sqrt(sum eps_k^2), Theorem 4, which does not hold). Unset for
  // every other setting x granularity, where `epsilon` already is global.
  std::optional<double> epsilon_per_user_global;
  // Algorithm::kStatistics: its releases, noise shares and both guarantees
  // (epsilon against the server + c parties, epsilon_alone).
  std::optional<StatsPlan> stats_plan;
  int32_t rounds = 0;
  double seconds = 0;
};

using ProgressFn = std::function<void(const RoundProgress&)>;

// Runs `config` on `federation`. `eval_every` > 0 evaluates test MSE for the
// progress callback every that many rounds (0: never). The parties' data
// moves into their sessions: pass the federation with std::move when the
// caller no longer needs it (a copy otherwise), so no rating is held twice.
absl::StatusOr<SimulationResult> Simulate(const JobConfig& config, data::Federation federation,
                                          const ProgressFn& progress = nullptr,
                                          int32_t eval_every = 0);

// As above, but party k targets party_epsilon[k] instead of config.epsilon
// (+inf: that party adds no noise): each party admits the job at its own
// privacy level, as in the CoL game where each player picks its own
// (fedmf advise). party_epsilon must have one entry per party, each > 0.
absl::StatusOr<SimulationResult> SimulateWithPartyEpsilons(const JobConfig& config,
                                                           data::Federation federation,
                                                           const std::vector<double>& party_epsilon,
                                                           const ProgressFn& progress = nullptr,
                                                           int32_t eval_every = 0);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_SIMULATOR_H_
