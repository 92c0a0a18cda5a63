#include "common/advise/repeats.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fedmf::advise {

absl::StatusOr<TradeoffTable> MeanTable(const std::vector<TradeoffTable>& tables) {
  if (tables.empty()) return absl::InvalidArgumentError("no measured grid to average");
  TradeoffTable mean = tables[0];
  const size_t k = mean.actions.size();
  for (size_t t = 1; t < tables.size(); ++t) {
    const TradeoffTable& other = tables[t];
    bool same = other.actions.size() == k;
    for (size_t a = 0; same && a < k; ++a) {
      same = ActionLabel(other.actions[a]) == ActionLabel(mean.actions[a]);
    }
    for (int n = 0; same && n < 2; ++n) {
      same = other.error[n].size() == mean.error[n].size();
      for (size_t i = 0; same && i < other.error[n].size(); ++i) {
        same = other.error[n][i].size() == mean.error[n][i].size();
      }
    }
    if (!same) {
      return absl::InvalidArgumentError(
          absl::StrCat("repeat ", t + 1, " measured another grid than repeat 1"));
    }
    for (int n = 0; n < 2; ++n) {
      mean.alone_error[n] += other.alone_error[n];
      for (size_t i = 0; i < mean.error[n].size(); ++i) {
        for (size_t j = 0; j < mean.error[n][i].size(); ++j) {
          mean.error[n][i][j] += other.error[n][i][j];
        }
      }
    }
  }
  const double count = static_cast<double>(tables.size());
  for (int n = 0; n < 2; ++n) {
    mean.alone_error[n] /= count;
    for (auto& row : mean.error[n]) {
      for (double& e : row) e /= count;
    }
  }
  return mean;
}

fmf::GainSummary CellGain(const std::vector<TradeoffTable>& tables, int player, Cell cell) {
  std::vector<std::optional<double>> gains;
  for (const TradeoffTable& t : tables) {
    const bool alone = cell.i >= t.actions.size() || cell.j >= t.actions.size() ||
                       t.actions[cell.i].alone || t.actions[cell.j].alone;
    const double theta = t.alone_error[player];
    if (alone) {
      gains.push_back(0.0);
    } else if (theta > 0) {
      gains.push_back((theta - t.error[player][cell.i][cell.j]) / theta);
    } else {
      gains.push_back(std::nullopt);
    }
  }
  return fmf::SummarizeGains(gains);
}

RepeatedAdvice AdviseWithRepeats(const CoLGame& mean_game, const Recommendation& game_says,
                                 const std::vector<TradeoffTable>& tables) {
  RepeatedAdvice out;
  out.recommendation = game_says;
  out.game_collaborates = game_says.collaborate;
  out.judged = game_says.collaborate ? game_says.equilibrium.cell
                                     : Cell{mean_game.open_index(), mean_game.open_index()};
  for (int n = 0; n < 2; ++n) {
    out.gain[n] = CellGain(tables, n, out.judged);
    out.verdict[n] = fmf::JudgeGain(out.gain[n]);
  }
  if (!game_says.collaborate) return out;
  if (tables.size() < 2) {
    out.recommendation.reason +=
        "; one repeat: whether the gain is more than seed-to-seed noise "
        "is not measured (give --repeats 3 or more)";
    return out;
  }
  std::vector<std::string> unsure;
  for (int n = 0; n < 2; ++n) {
    if (out.verdict[n] == fmf::GainVerdict::kHelps) continue;
    unsure.push_back(absl::StrFormat("player %d's gain over training alone %s", n + 1,
                                     out.verdict[n] == fmf::GainVerdict::kHurts
                                         ? "lies below 0"
                                         : "is not distinguishable from 0"));
  }
  if (unsure.empty()) {
    out.recommendation.reason += absl::StrFormat(
        "; both players' gains lie above 0 in their 95%% intervals over %d repeats", tables.size());
    return out;
  }
  const auto& acts = mean_game.table().actions;
  const Cell alone{mean_game.alone_index(), mean_game.alone_index()};
  out.recommendation.collaborate = false;
  out.recommendation.equilibrium = mean_game.Describe(alone);
  out.recommendation.reason = absl::StrFormat(
      "stay alone: the game on the mean of %d repeats favours player 1 at epsilon %s and "
      "player 2 at epsilon %s, but there %s (95%% intervals over the repeats)",
      tables.size(), ActionLabel(acts[game_says.equilibrium.cell.i]),
      ActionLabel(acts[game_says.equilibrium.cell.j]), absl::StrJoin(unsure, " and "));
  return out;
}

}  // namespace fedmf::advise
