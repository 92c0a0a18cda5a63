// `fedmf advise --repeats N` (issue #56): the trade-off grid measured N times
// (another seed each: split, noise and proxy data), the game played on the
// cell-wise mean, and the recommendation kept only where every player's gain
// is told from zero by its 95% interval over the repeats — one seed's grid
// swings by tens of points of gain at a private epsilon.
//
// Pure: no I/O, no clocks, no randomness.
#ifndef FEDMF_COMMON_ADVISE_REPEATS_H_
#define FEDMF_COMMON_ADVISE_REPEATS_H_

#include <array>
#include <vector>

#include "absl/status/statusor.h"
#include "common/advise/col_game.h"
#include "common/fmf/gain.h"

namespace fedmf::advise {

// The cell-wise mean of `tables` (errors and alone errors); all must have the
// same action grid and shape. One table is returned as it is.
absl::StatusOr<TradeoffTable> MeanTable(const std::vector<TradeoffTable>& tables);

// Player n's gain over training alone at `cell` in each table, signed:
// (alone_error - error) / alone_error (the game's b_n before its clip at 0,
// 0 where either player is alone), summarized over the tables (mean, sd,
// 95% interval: fmf::SummarizeGains).
fmf::GainSummary CellGain(const std::vector<TradeoffTable>& tables, int player, Cell cell);

// The recommendation with its spread. `game_says` is Recommend() on the mean
// table. The cell judged is the recommended one when it collaborates, else
// the non-private one (inf, inf: what collaborating could give at best).
struct RepeatedAdvice {
  Recommendation recommendation;   // final: collaborate only if both gains are told > 0
  bool game_collaborates = false;  // what the game on the mean grid said
  Cell judged;
  std::array<fmf::GainSummary, 2> gain;
  std::array<fmf::GainVerdict, 2> verdict{fmf::GainVerdict::kUndefined,
                                          fmf::GainVerdict::kUndefined};
};

// With one table (no interval) the game's recommendation stands, its reason
// saying the gain was not told from seed-to-seed noise; with more, a
// collaboration is recommended only when both players' 95% intervals lie
// above 0 at its cell, otherwise the players stay alone and the reason names
// the player(s) whose gain is not distinguishable from zero (or negative).
RepeatedAdvice AdviseWithRepeats(const CoLGame& mean_game, const Recommendation& game_says,
                                 const std::vector<TradeoffTable>& tables);

}  // namespace fedmf::advise

#endif  // FEDMF_COMMON_ADVISE_REPEATS_H_
