#include "common/advise/col_game.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"

namespace fedmf::advise {
namespace {

constexpr double kTie = 1e-12;

absl::Status ValidateWeights(const PlayerWeights& w, int player) {
  if (!(std::isfinite(w.accuracy) && w.accuracy > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "player ", player, ": accuracy weight B = ", w.accuracy, " must be finite and > 0"));
  }
  if (!(std::isfinite(w.privacy) && w.privacy >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "player ", player, ": privacy weight C = ", w.privacy, " must be finite and >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

double PrivacyLevel(const Action& action) {
  if (action.alone) return 1.0;
  if (std::isinf(action.epsilon)) return 0.0;
  return 1.0 / (action.epsilon + 1.0);
}

std::string ActionLabel(const Action& action) {
  if (action.alone) return "alone";
  if (std::isinf(action.epsilon)) return "inf";
  return absl::StrFormat("%g", action.epsilon);
}

absl::StatusOr<CoLGame> CoLGame::Create(TradeoffTable table, PlayerWeights p1, PlayerWeights p2) {
  RETURN_IF_ERROR(ValidateWeights(p1, 1));
  RETURN_IF_ERROR(ValidateWeights(p2, 2));
  const size_t k = table.actions.size();
  std::optional<size_t> alone, open;
  std::set<std::string> seen;
  for (size_t a = 0; a < k; ++a) {
    const Action& act = table.actions[a];
    if (!seen.insert(ActionLabel(act)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("action ", a, " (", ActionLabel(act), ") appears twice in the grid"));
    }
    if (act.alone) {
      alone = a;
    } else if (std::isinf(act.epsilon) && act.epsilon > 0) {
      open = a;
    } else if (!(act.epsilon > 0) || std::isnan(act.epsilon)) {
      return absl::InvalidArgumentError(absl::StrCat("action ", a, ": epsilon = ", act.epsilon,
                                                     " must be > 0 (or inf for no noise)"));
    }
  }
  if (!alone) {
    return absl::InvalidArgumentError("the action grid needs the \"alone\" action (p = 1)");
  }
  if (!open) {
    return absl::InvalidArgumentError(
        "the action grid needs the non-private action (epsilon = inf, p = 0): the Price of "
        "Privacy is measured against it");
  }
  for (int n = 0; n < 2; ++n) {
    if (!(std::isfinite(table.alone_error[n]) && table.alone_error[n] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "player ", n + 1, ": error alone = ", table.alone_error[n], " must be finite and > 0"));
    }
    if (table.error[n].size() != k) {
      return absl::InvalidArgumentError(absl::StrCat("player ", n + 1, ": error table has ",
                                                     table.error[n].size(), " rows, want ", k));
    }
    for (size_t i = 0; i < k; ++i) {
      if (table.error[n][i].size() != k) {
        return absl::InvalidArgumentError(absl::StrCat("player ", n + 1, ": error row ", i, " has ",
                                                       table.error[n][i].size(), " entries, want ",
                                                       k));
      }
      for (size_t j = 0; j < k; ++j) {
        if (i == *alone || j == *alone) continue;
        const double e = table.error[n][i][j];
        if (!(std::isfinite(e) && e >= 0)) {
          return absl::InvalidArgumentError(
              absl::StrCat("player ", n + 1, ": error at (", ActionLabel(table.actions[i]), ", ",
                           ActionLabel(table.actions[j]), ") = ", e, " must be finite and >= 0"));
        }
      }
    }
  }
  return CoLGame(std::move(table), p1, p2, *alone, *open);
}

double CoLGame::Error(int player, Cell c) const {
  if (c.i == alone_ || c.j == alone_) return table_.alone_error[player];
  return table_.error[player][c.i][c.j];
}

double CoLGame::Benefit(int player, Cell c) const {
  const double theta = table_.alone_error[player];
  return std::max(0.0, theta - Error(player, c)) / theta;
}

double CoLGame::Utility(int player, Cell c) const {
  const Action& own = table_.actions[player == 0 ? c.i : c.j];
  const PlayerWeights& w = weights_[player];
  return w.accuracy * Benefit(player, c) - w.privacy * (1.0 - PrivacyLevel(own));
}

std::optional<double> CoLGame::PriceOfPrivacy(Cell c) const {
  const Cell open{open_, open_};
  const double best = Benefit(0, open) + Benefit(1, open);
  if (best <= 0) return std::nullopt;
  return 1.0 - (Benefit(0, c) + Benefit(1, c)) / best;
}

Equilibrium CoLGame::Describe(Cell c) const {
  Equilibrium e;
  e.cell = c;
  for (int n = 0; n < 2; ++n) {
    e.utility[n] = Utility(n, c);
    e.benefit[n] = Benefit(n, c);
  }
  e.price_of_privacy = PriceOfPrivacy(c);
  e.individually_rational = e.utility[0] >= -kTie && e.utility[1] >= -kTie;
  return e;
}

std::vector<size_t> CoLGame::BestResponses(int player, size_t other) const {
  const size_t k = size();
  auto cell = [&](size_t own) { return player == 0 ? Cell{own, other} : Cell{other, own}; };
  double best = -std::numeric_limits<double>::infinity();
  for (size_t a = 0; a < k; ++a) best = std::max(best, Utility(player, cell(a)));
  std::vector<size_t> out;
  for (size_t a = 0; a < k; ++a) {
    if (Utility(player, cell(a)) >= best - kTie) out.push_back(a);
  }
  return out;
}

std::vector<Equilibrium> CoLGame::PureNashEquilibria() const {
  std::vector<Equilibrium> out;
  const size_t k = size();
  for (size_t i = 0; i < k; ++i) {
    const std::vector<size_t> br2 = BestResponses(1, i);
    for (size_t j : br2) {
      const std::vector<size_t> br1 = BestResponses(0, j);
      if (std::find(br1.begin(), br1.end(), i) != br1.end()) out.push_back(Describe({i, j}));
    }
  }
  std::sort(out.begin(), out.end(), [](const Equilibrium& a, const Equilibrium& b) {
    return std::make_pair(a.cell.i, a.cell.j) < std::make_pair(b.cell.i, b.cell.j);
  });
  return out;
}

std::optional<Equilibrium> CoLGame::BestResponseDynamics() const {
  // Least private first: the order in which ties are broken.
  auto pick = [&](const std::vector<size_t>& br, size_t current) {
    if (std::find(br.begin(), br.end(), current) != br.end()) return current;
    return *std::min_element(br.begin(), br.end(), [&](size_t a, size_t b) {
      return PrivacyLevel(table_.actions[a]) < PrivacyLevel(table_.actions[b]);
    });
  };
  Cell c{open_, open_};
  std::set<std::pair<size_t, size_t>> visited;
  while (visited.insert({c.i, c.j}).second) {
    const size_t i = pick(BestResponses(0, c.j), c.i);
    const Cell after{i, pick(BestResponses(1, i), c.j)};
    if (after == c) return Describe(c);
    c = after;
  }
  return std::nullopt;
}

Recommendation Recommend(const CoLGame& game) {
  Recommendation rec;
  const Cell alone{game.alone_index(), game.alone_index()};
  std::optional<Equilibrium> best;
  for (const Equilibrium& e : game.PureNashEquilibria()) {
    if (!e.individually_rational) continue;
    if (!best) {
      best = e;
      continue;
    }
    const double total = e.utility[0] + e.utility[1];
    const double best_total = best->utility[0] + best->utility[1];
    if (total > best_total + kTie) {
      best = e;
    } else if (total >= best_total - kTie) {
      const double pop = e.price_of_privacy.value_or(1.0);
      const double best_pop = best->price_of_privacy.value_or(1.0);
      if (pop < best_pop - kTie) best = e;
    }
  }
  // Collaborating must pay: an equilibrium whose total payoff only ties
  // training alone (0) is not worth the exposure the model does not price.
  const bool collaborates = best && best->cell.i != game.alone_index() &&
                            best->cell.j != game.alone_index() &&
                            best->utility[0] + best->utility[1] > kTie;
  if (!collaborates) {
    rec.collaborate = false;
    rec.equilibrium = game.Describe(alone);
    rec.reason =
        "no equilibrium in which both players collaborate gives both a payoff at least that of "
        "training alone: stay alone";
    return rec;
  }
  rec.collaborate = true;
  rec.equilibrium = *best;
  const auto& acts = game.table().actions;
  rec.reason = absl::StrFormat(
      "collaborate: player 1 at epsilon %s, player 2 at epsilon %s (payoffs %.4f, %.4f; "
      "the equilibrium with the highest total payoff)",
      ActionLabel(acts[best->cell.i]), ActionLabel(acts[best->cell.j]), best->utility[0],
      best->utility[1]);
  return rec;
}

}  // namespace fedmf::advise
