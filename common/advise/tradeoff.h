// Measuring the privacy-accuracy trade-off Phi_n(p1, p2) of the CoL game
// (col_game.h) by running fedmf itself: one in-process federation of two
// parties per grid cell, each party at its own epsilon, the error of each
// party being its RMSE on a validation share carved from its own ratings.
//
// Where the data comes from is the caller's choice, and decides what the
// measurement costs in privacy (docs/privacy.md, "fedmf advise"):
//   JoinParties     - the two parties' real data (the grid's runs touch it)
//   SelfDivision    - one party's data split in two (nothing crosses parties)
//   ProxyFederation - synthetic data of the parties' public shape (free)
#ifndef FEDMF_COMMON_ADVISE_TRADEOFF_H_
#define FEDMF_COMMON_ADVISE_TRADEOFF_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/advise/col_game.h"
#include "common/data/partition.h"
#include "common/data/ratings.h"
#include "common/fmf/job_config.h"

namespace fedmf::advise {

// The two parties' own files as one two-party federation. HFL (setting kHfl
// or kHflSynSgd): the parties hold different users (A's user "7" is not B's)
// and share the item catalogue, joined by item id; VFL: they hold different
// items and share users, joined by user id. Both must declare the same
// rating range. Party 0 is `a`. Each party's validation share is
// split.test_fraction of its ratings.
absl::StatusOr<data::Federation> JoinParties(const data::Dataset& a, const data::Dataset& b,
                                             fmf::Setting setting, const data::SplitOptions& split);

// One party's data split in two at random (by user for HFL, by item for
// VFL): the Self-Division heuristic of the paper's §7.2, in which a player
// imitates the collaboration with a copy of itself.
absl::StatusOr<data::Federation> SelfDivision(const data::Dataset& own, fmf::Setting setting,
                                              const data::SplitOptions& split);

// Synthetic data with the parties' shape (users, items, rating count and
// range: public by construction here, see docs/privacy.md), joined as
// JoinParties would join two such files. `seed` drives the generator.
absl::StatusOr<data::Federation> ProxyFederation(const data::Dataset& a, const data::Dataset& b,
                                                 fmf::Setting setting,
                                                 const data::SplitOptions& split, uint64_t seed);

struct MeasureOptions {
  // The job every cell runs (setting kHfl, kHflSynSgd or kVfl, its
  // hyperparameters and seed); its epsilon is replaced by the grid's.
  fmf::JobConfig job;
  // The finite epsilons of the grid, each > 0; "inf" (no noise) and "alone"
  // are always added.
  std::vector<double> epsilons;
};

// One run of the grid.
struct CellRun {
  Action action[2];
  double error[2] = {0, 0};          // validation RMSE of each party
  double epsilon_spent[2] = {0, 0};  // what each party's ledger charged (inf: no noise)
  double seconds = 0;
};

struct Measurement {
  TradeoffTable table;
  std::vector<CellRun> runs;  // every cell, then the two alone runs
  // Per party, the epsilon its ledgers charged over all runs (basic
  // composition): what the grid costs when its runs touch real data.
  double total_epsilon[2] = {0, 0};
};

using MeasureProgress = std::function<void(const CellRun& run, int done, int total)>;

// Runs the (k+1)^2 federated cells and the alone baselines (each party
// trains on its own ratings without noise: nothing leaves it) on
// `federation` (exactly two parties).
absl::StatusOr<Measurement> MeasureTradeoff(const data::Federation& federation,
                                            const MeasureOptions& options,
                                            const MeasureProgress& progress = nullptr);

// Player n's rows of `mine` (player n's own measurement, e.g. each from its
// Self-Division): error[n] and alone_error[n] from mine[n]. Both must have
// the same action grid.
absl::StatusOr<TradeoffTable> CombineOwnViews(const TradeoffTable& player1_view,
                                              const TradeoffTable& player2_view);

}  // namespace fedmf::advise

#endif  // FEDMF_COMMON_ADVISE_TRADEOFF_H_
