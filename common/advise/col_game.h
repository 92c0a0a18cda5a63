// The two-player Collaborative Learning (CoL) game of Pejó, Tang and Biczók,
// "Together or Alone: The Price of Privacy in Collaborative Learning"
// (PoPETs 2019), on a measured, finite action grid.
//
// Each player n picks a privacy level p_n in [0, 1]: p = 0 is no protection
// (epsilon = inf), p = 1 is full protection, i.e. not collaborating at all
// (training alone); in between p = 1 / (epsilon + 1) (the paper's §5.3
// mapping, a label for ordering only — it claims no equivalence). Payoffs
// use the paper's linear functions (its Eq. (4) and (11)):
//
//   b_n(p1, p2) = [theta_n - Phi_n(p1, p2)]^+ / theta_n   (normalized gain)
//   c(p_n)      = 1 - p_n                                  (privacy loss)
//   u_n(p1, p2) = B_n * b_n(p1, p2) - C_n * c(p_n)
//
// theta_n is player n's error training alone, Phi_n its error training
// together; if either player picks "alone" nobody collaborates and
// Phi_n = theta_n (so (alone, alone) is always an equilibrium: Theorem 1).
// The paper discretizes the action spaces itself (its footnote 11); here
// the actions are exactly the measured grid points, so no value reported
// is interpolated.
//
// Pure: no I/O, no clocks, no randomness.
#ifndef FEDMF_COMMON_ADVISE_COL_GAME_H_
#define FEDMF_COMMON_ADVISE_COL_GAME_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fedmf::advise {

// One action: collaborate at `epsilon` (inf = without noise), or stay alone.
struct Action {
  bool alone = false;
  double epsilon = 0;  // meaningful when !alone; +inf = non-private
};

// p = 0 for epsilon = inf, 1/(epsilon+1) otherwise, 1 for alone.
double PrivacyLevel(const Action& action);
std::string ActionLabel(const Action& action);  // "alone", "inf", "4"

// B_n (accuracy weight, > 0) and C_n (privacy weight, >= 0).
struct PlayerWeights {
  double accuracy = 1.0;
  double privacy = 0.0;
};

// Measured errors (e.g. validation RMSE). error[n][i][j] is player n's error
// when player 1 plays actions[i] and player 2 actions[j]; entries where
// either action is "alone" are ignored and taken as alone_error[n].
struct TradeoffTable {
  std::vector<Action> actions;  // the same action set for both players
  double alone_error[2] = {0, 0};
  std::vector<std::vector<double>> error[2];
};

struct Cell {
  size_t i = 0;  // player 1's action index
  size_t j = 0;  // player 2's action index
  friend bool operator==(const Cell&, const Cell&) = default;
};

struct Equilibrium {
  Cell cell;
  double utility[2] = {0, 0};
  double benefit[2] = {0, 0};
  // 1 - sum_n b_n(cell) / sum_n b_n(no protection): the paper's Eq. (2).
  // Unset when collaborating without protection brings no gain to anyone
  // (the ratio is undefined).
  std::optional<double> price_of_privacy;
  bool individually_rational = false;  // u_n >= 0 for both (else one would rather stay alone)
};

class CoLGame {
 public:
  // Validates the table (>= 1 non-alone action plus exactly one "alone"
  // action, a non-private action, epsilons > 0, distinct actions, finite
  // positive errors of the right shape) and the weights (B > 0, C >= 0,
  // both finite); errors name the offending entry.
  static absl::StatusOr<CoLGame> Create(TradeoffTable table, PlayerWeights p1, PlayerWeights p2);

  const TradeoffTable& table() const { return table_; }
  size_t size() const { return table_.actions.size(); }
  size_t alone_index() const { return alone_; }
  // The non-private action (epsilon = inf).
  size_t open_index() const { return open_; }

  double Error(int player, Cell c) const;
  double Benefit(int player, Cell c) const;
  double Utility(int player, Cell c) const;
  std::optional<double> PriceOfPrivacy(Cell c) const;
  Equilibrium Describe(Cell c) const;

  // Player `player`'s best responses to the other's action (all maximizers,
  // ties within 1e-12).
  std::vector<size_t> BestResponses(int player, size_t other_action) const;
  // Every pure-strategy Nash equilibrium of the finite game, in (i, j) order.
  std::vector<Equilibrium> PureNashEquilibria() const;
  // Alternating best-response dynamics from (non-private, non-private),
  // player 1 first, as in the paper's §7.1. On ties a player keeps its
  // current action if it is a best response, else takes the least private
  // one. Returns the fixed point, or unset if the dynamics cycle.
  std::optional<Equilibrium> BestResponseDynamics() const;

 private:
  CoLGame(TradeoffTable table, PlayerWeights p1, PlayerWeights p2, size_t alone, size_t open)
      : table_(std::move(table)), weights_{p1, p2}, alone_(alone), open_(open) {}

  TradeoffTable table_;
  PlayerWeights weights_[2];
  size_t alone_ = 0;
  size_t open_ = 0;
};

// What the advisor recommends: among the individually rational equilibria,
// the one with the highest total utility (ties: the lower Price of Privacy,
// then the less private). If that is (alone, alone), or its total payoff
// is not above training alone's 0, the players should stay alone.
struct Recommendation {
  bool collaborate = false;
  Equilibrium equilibrium;
  std::string reason;
};
Recommendation Recommend(const CoLGame& game);

}  // namespace fedmf::advise

#endif  // FEDMF_COMMON_ADVISE_COL_GAME_H_
