#include "tools/fedmf/advise_command.h"

#include <array>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/advise/col_game.h"
#include "common/advise/repeats.h"
#include "common/advise/tradeoff.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "tools/fedmf/advise_plot.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {
namespace {

struct AdviseFlags {
  JobFlags job;  // setting, hyperparameters, seed (its epsilon and data are unused)
  std::vector<std::string> party_data;
  std::string mode = "joint";
  std::string epsilons = "8,4,2,1";
  std::string weights = "1,0.1,1,0.1";
  std::string plot;
  std::string grid_from;
  double validation_fraction = 0.1;
  // Measurements of the grid, seeds --seed .. --seed + repeats - 1 (issue #56).
  int32_t repeats = 3;
};

// The JSON of a grid: its epsilon labels, alone_rmse and rmse_playerN.
advise::TradeoffTable GridFromJson(const nlohmann::json& g, const nlohmann::json& epsilon) {
  advise::TradeoffTable t;
  for (const auto& e : epsilon) {
    if (e == "alone") {
      t.actions.push_back({true, 0});
    } else if (e == "inf") {
      t.actions.push_back({false, std::numeric_limits<double>::infinity()});
    } else {
      t.actions.push_back({false, e.get<double>()});
    }
  }
  for (int n = 0; n < 2; ++n) {
    t.alone_error[n] = g.at("alone_rmse").at(n).get<double>();
    t.error[n] = g.at(absl::StrCat("rmse_player", n + 1)).get<std::vector<std::vector<double>>>();
  }
  return t;
}

// The measured grids of an earlier `fedmf advise --json` run (each repeat's,
// when it recorded them; else its one grid), so the game can be replayed with
// other weights without measuring again.
absl::StatusOr<std::vector<advise::TradeoffTable>> LoadGrids(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("--grid-from ", path, ": cannot read the file"));
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    const nlohmann::json& g = j.at("grid");
    std::vector<advise::TradeoffTable> tables;
    if (j.contains("repeat_grids")) {
      for (const auto& r : j.at("repeat_grids")) {
        tables.push_back(GridFromJson(r, g.at("epsilon")));
      }
    }
    if (tables.empty()) tables.push_back(GridFromJson(g, g.at("epsilon")));
    return tables;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--grid-from ", path, ": not the JSON of `fedmf advise --json` (", e.what(), ")"));
  }
}

absl::StatusOr<std::vector<double>> ParseList(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(auto e, ParseEpsilon(std::string(part), flag));
    out.push_back(e);
  }
  if (out.empty()) return absl::InvalidArgumentError(flag + " is empty");
  return out;
}

absl::StatusOr<std::pair<advise::PlayerWeights, advise::PlayerWeights>> ParseWeights(
    const std::string& text) {
  std::vector<double> v;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    double x = 0;
    if (!absl::SimpleAtod(part, &x)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--weights: \"", part,
                       "\" is not a number; give B1,C1,B2,C2 (accuracy and privacy "
                       "weight of each player), e.g. 1,0.1,1,0.1"));
    }
    v.push_back(x);
  }
  if (v.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("--weights has ", v.size(), " values; give B1,C1,B2,C2, e.g. 1,0.1,1,0.1"));
  }
  return std::make_pair(advise::PlayerWeights{v[0], v[1]}, advise::PlayerWeights{v[2], v[3]});
}

nlohmann::json ActionJson(const advise::Action& a) {
  if (a.alone) return "alone";
  return JsonNumber(a.epsilon);
}

nlohmann::json EquilibriumJson(const advise::CoLGame& game, const advise::Equilibrium& e) {
  const auto& acts = game.table().actions;
  nlohmann::json pop = nullptr;
  if (e.price_of_privacy) pop = *e.price_of_privacy;
  return {{"epsilon", {ActionJson(acts[e.cell.i]), ActionJson(acts[e.cell.j])}},
          {"utility", {e.utility[0], e.utility[1]}},
          {"gain", {e.benefit[0], e.benefit[1]}},
          {"rmse", {game.Error(0, e.cell), game.Error(1, e.cell)}},
          {"price_of_privacy", pop}};
}

// What a measurement costs and how it was taken (the same for every repeat).
struct MeasureCost {
  std::array<double, 2> epsilon = {0, 0};
  std::string note;
};

int PrintAdvice(const AdviseFlags& a, const std::vector<advise::TradeoffTable>& tables,
                const std::vector<uint64_t>& seeds,
                const std::pair<advise::PlayerWeights, advise::PlayerWeights>& weights,
                const MeasureCost& cost);

// One measurement of the grid with `seed` (split, noise, proxy data).
absl::StatusOr<advise::TradeoffTable> MeasureOnce(const AdviseFlags& a,
                                                  const std::vector<data::Dataset>& parties,
                                                  const fmf::JobConfig& config,
                                                  const std::vector<double>& finite, uint64_t seed,
                                                  const advise::MeasureProgress& progress,
                                                  MeasureCost* cost) {
  data::SplitOptions split;
  split.test_fraction = a.validation_fraction;
  split.seed = seed;
  advise::MeasureOptions options;
  options.job = config;
  // The noise follows --seed only when one is given (else the CSPRNG's
  // entropy, as in any run); the split always follows the repeat's seed.
  if (config.seed) options.job.seed = seed;
  options.epsilons = finite;
  if (a.mode == "joint" || a.mode == "proxy") {
    ASSIGN_OR_RETURN(
        data::Federation fed,
        a.mode == "joint"
            ? advise::JoinParties(parties[0], parties[1], config.setting, split)
            : advise::ProxyFederation(parties[0], parties[1], config.setting, split, seed));
    ASSIGN_OR_RETURN(advise::Measurement m, advise::MeasureTradeoff(fed, options, progress));
    if (a.mode == "joint") {
      cost->epsilon[0] += m.total_epsilon[0];
      cost->epsilon[1] += m.total_epsilon[1];
      cost->note =
          "joint: the grid's runs train on both parties' real data; run as federated jobs each "
          "party pays the sum of the epsilons it used (basic composition over cells and "
          "repeats, plus every inf cell releases without noise); run here in one process, "
          "whoever runs it holds both files";
    } else {
      cost->note =
          "proxy: synthetic data of the parties' shape (users, items, rating count, range); no "
          "rating is read beyond that shape";
    }
    return m.table;
  }
  if (a.mode == "self-division") {
    advise::TradeoffTable views[2];
    for (int k = 0; k < 2; ++k) {
      auto fed = advise::SelfDivision(parties[k], config.setting, split);
      if (!fed.ok()) {
        return absl::Status(fed.status().code(),
                            absl::StrCat("player ", k + 1, ": ", fed.status().message()));
      }
      auto m = advise::MeasureTradeoff(*fed, options, progress);
      if (!m.ok()) {
        return absl::Status(m.status().code(),
                            absl::StrCat("player ", k + 1, ": ", m.status().message()));
      }
      views[k] = m->table;
    }
    cost->note =
        "self-division: each player measured on its own data split in two; nothing crosses "
        "parties, but the table a player shares is computed without noise on its own ratings";
    return advise::CombineOwnViews(views[0], views[1]);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--mode \"", a.mode, "\": use joint, self-division or proxy"));
}

int RunAdvise(const AdviseFlags& a) {
  if (a.party_data.size() != 2 && a.grid_from.empty()) {
    return Report("fedmf advise", absl::InvalidArgumentError(absl::StrCat(
                                      "give --party-data exactly twice (player 1, player 2); got ",
                                      a.party_data.size())));
  }
  if (a.mode != "joint" && a.mode != "proxy" && a.mode != "self-division") {
    return Report("fedmf advise",
                  absl::InvalidArgumentError(
                      absl::StrCat("--mode \"", a.mode, "\": use joint, self-division or proxy")));
  }
  auto grid = ParseList(a.epsilons, "--epsilons");
  if (!grid.ok()) return Report("fedmf advise", grid.status());
  std::vector<double> finite;
  for (double e : *grid) {
    if (!std::isinf(e)) finite.push_back(e);  // inf is always measured
  }
  auto weights = ParseWeights(a.weights);
  if (!weights.ok()) return Report("fedmf advise", weights.status());

  if (!a.grid_from.empty()) {
    auto t = LoadGrids(a.grid_from);
    if (!t.ok()) return Report("fedmf advise", t.status());
    return PrintAdvice(a, *t, {}, *weights,
                       {{0, 0}, "replayed from --grid-from: no new measurement"});
  }
  std::vector<data::Dataset> parties;
  for (size_t k = 0; k < 2; ++k) {
    auto d = LoadWithDeclaredRange(a.job, a.party_data[k]);
    if (!d.ok()) {
      return Report("fedmf advise",
                    WithPrefix(d.status(), absl::StrCat("--party-data #", k + 1, " (",
                                                        a.party_data[k], "): ")));
    }
    parties.push_back(std::move(*d));
  }
  auto config = BuildJobConfig(a.job, parties[0].range);
  if (!config.ok()) return Report("fedmf advise", config.status());

  std::vector<advise::TradeoffTable> tables;
  std::vector<uint64_t> seeds;
  MeasureCost cost;
  const uint64_t first = a.job.seed.value_or(1);
  for (int32_t r = 0; r < a.repeats; ++r) {
    const uint64_t seed = first + static_cast<uint64_t>(r);
    advise::MeasureProgress progress;
    if (!a.job.quiet) {
      progress = [&, r, seed](const advise::CellRun& run, int done, int total) {
        std::cerr << absl::StrFormat(
            "repeat %d/%d (seed %d) [%3d/%d] eps (%-5s, %-5s)  rmse %.4f %.4f  %.1fs\n", r + 1,
            a.repeats, seed, done, total, advise::ActionLabel(run.action[0]),
            advise::ActionLabel(run.action[1]), run.error[0], run.error[1], run.seconds);
      };
    }
    auto t = MeasureOnce(a, parties, *config, finite, seed, progress, &cost);
    if (!t.ok()) return Report("fedmf advise", t.status());
    tables.push_back(std::move(*t));
    seeds.push_back(seed);
  }
  return PrintAdvice(a, tables, seeds, *weights, cost);
}

std::string Percent(double v) { return absl::StrFormat("%.1f%%", 100 * v); }

nlohmann::json GainJson(const fmf::GainSummary& g, fmf::GainVerdict verdict) {
  const fmf::GainVerdict v = verdict;
  return {{"mean", std::isnan(g.mean) ? nlohmann::json(nullptr) : nlohmann::json(g.mean)},
          {"sd", g.sd ? nlohmann::json(*g.sd) : nlohmann::json(nullptr)},
          {"ci95", g.ci95_low ? nlohmann::json::array({*g.ci95_low, *g.ci95_high})
                              : nlohmann::json(nullptr)},
          {"verdict", fmf::GainVerdictName(v)},
          {"distinguishable", v == fmf::GainVerdict::kHelps || v == fmf::GainVerdict::kHurts}};
}

nlohmann::json GridJson(const advise::TradeoffTable& t) {
  nlohmann::json g = {{"alone_rmse", {t.alone_error[0], t.alone_error[1]}}};
  for (int n = 0; n < 2; ++n) g[absl::StrCat("rmse_player", n + 1)] = t.error[n];
  return g;
}

int PrintAdvice(const AdviseFlags& a, const std::vector<advise::TradeoffTable>& tables,
                const std::vector<uint64_t>& seeds,
                const std::pair<advise::PlayerWeights, advise::PlayerWeights>& weights,
                const MeasureCost& cost) {
  auto mean = advise::MeanTable(tables);
  if (!mean.ok()) return Report("fedmf advise", mean.status());
  const advise::TradeoffTable& table = *mean;
  auto game = advise::CoLGame::Create(table, weights.first, weights.second);
  if (!game.ok()) return Report("fedmf advise", game.status());
  const advise::RepeatedAdvice advice =
      advise::AdviseWithRepeats(*game, advise::Recommend(*game), tables);
  const advise::Recommendation& rec = advice.recommendation;
  const std::vector<advise::Equilibrium> equilibria = game->PureNashEquilibria();
  const std::optional<advise::Equilibrium> dynamics = game->BestResponseDynamics();
  const auto& acts = game->table().actions;
  const int32_t repeats = static_cast<int32_t>(tables.size());
  const std::string judged = absl::StrFormat("(%s, %s)", advise::ActionLabel(acts[advice.judged.i]),
                                             advise::ActionLabel(acts[advice.judged.j]));

  if (!a.plot.empty()) {
    std::ofstream out(a.plot);
    out << AdvisePlotSvg(
        *game, rec,
        absl::StrFormat("fedmf advise: %s, %s mode, mean of %d repeat%s",
                        SettingName(a.job.setting), a.grid_from.empty() ? a.mode : "replay",
                        repeats, repeats == 1 ? "" : "s"));
    if (!out) {
      return Report("fedmf advise", absl::UnavailableError(absl::StrCat(
                                        "--plot ", a.plot, ": cannot write the file")));
    }
  }

  if (a.job.json) {
    nlohmann::json grid_json = GridJson(table);
    nlohmann::json labels = nlohmann::json::array(), levels = nlohmann::json::array();
    for (const auto& act : acts) {
      labels.push_back(ActionJson(act));
      levels.push_back(advise::PrivacyLevel(act));
    }
    grid_json["epsilon"] = labels;
    grid_json["privacy_level"] = levels;
    for (int n = 0; n < 2; ++n) {
      nlohmann::json gains = nlohmann::json::array();
      for (size_t i = 0; i < acts.size(); ++i) {
        nlohmann::json gain = nlohmann::json::array();
        for (size_t j = 0; j < acts.size(); ++j) gain.push_back(game->Benefit(n, {i, j}));
        gains.push_back(gain);
      }
      grid_json[absl::StrCat("gain_player", n + 1)] = gains;
    }
    nlohmann::json repeat_grids = nlohmann::json::array();
    for (size_t r = 0; r < tables.size(); ++r) {
      nlohmann::json g = GridJson(tables[r]);
      if (r < seeds.size()) g["seed"] = seeds[r];
      repeat_grids.push_back(g);
    }
    nlohmann::json eq = nlohmann::json::array();
    for (const auto& e : equilibria) eq.push_back(EquilibriumJson(*game, e));
    nlohmann::json out = {
        {"setting", SettingName(a.job.setting)},
        {"mode", a.grid_from.empty() ? a.mode : std::string("replay")},
        {"party_data", a.party_data},
        {"repeats", repeats},
        {"seeds", seeds},
        {"weights",
         {{{"accuracy", weights.first.accuracy}, {"privacy", weights.first.privacy}},
          {{"accuracy", weights.second.accuracy}, {"privacy", weights.second.privacy}}}},
        {"grid", grid_json},
        {"repeat_grids", repeat_grids},
        {"equilibria", eq},
        {"best_response_dynamics",
         dynamics ? EquilibriumJson(*game, *dynamics) : nlohmann::json(nullptr)},
        {"price_of_privacy", rec.equilibrium.price_of_privacy
                                 ? nlohmann::json(*rec.equilibrium.price_of_privacy)
                                 : nlohmann::json(nullptr)},
        {"recommendation",
         {{"collaborate", rec.collaborate},
          {"game_collaborates", advice.game_collaborates},
          {"epsilon",
           {ActionJson(acts[rec.equilibrium.cell.i]), ActionJson(acts[rec.equilibrium.cell.j])}},
          {"reason", rec.reason},
          {"gain_epsilon", {ActionJson(acts[advice.judged.i]), ActionJson(acts[advice.judged.j])}},
          {"gain",
           {GainJson(advice.gain[0], advice.verdict[0]),
            GainJson(advice.gain[1], advice.verdict[1])}}}},
        {"measurement_cost",
         {{"epsilon_per_party", {JsonNumber(cost.epsilon[0]), JsonNumber(cost.epsilon[1])}},
          {"note", cost.note}}}};
    std::cout << out.dump() << "\n";
    return 0;
  }

  std::cout << absl::StrFormat("\nvalidation RMSE alone%s: player 1 %.4f, player 2 %.4f\n",
                               repeats > 1 ? absl::StrFormat(" (mean of %d repeats)", repeats) : "",
                               table.alone_error[0], table.alone_error[1]);
  for (int n = 0; n < 2; ++n) {
    std::cout << absl::StrFormat(
        "\nplayer %d: validation RMSE together%s (rows: player 1's "
        "epsilon, columns: player 2's)\n%8s",
        n + 1, repeats > 1 ? ", mean" : "", "");
    for (const auto& act : acts) std::cout << absl::StrFormat("%9s", advise::ActionLabel(act));
    std::cout << "\n";
    for (size_t i = 0; i < acts.size(); ++i) {
      std::cout << absl::StrFormat("%8s", advise::ActionLabel(acts[i]));
      for (size_t j = 0; j < acts.size(); ++j) {
        std::cout << absl::StrFormat("%9.4f", game->Error(n, {i, j}));
      }
      std::cout << "\n";
    }
  }
  std::cout << "\nNash equilibria (epsilon 1, epsilon 2): utilities, Price of Privacy\n";
  for (const auto& e : equilibria) {
    std::cout << absl::StrFormat(
        "  (%s, %s): %.4f, %.4f  PoP %s\n", advise::ActionLabel(acts[e.cell.i]),
        advise::ActionLabel(acts[e.cell.j]), e.utility[0], e.utility[1],
        e.price_of_privacy ? absl::StrFormat("%.3f", *e.price_of_privacy) : "undefined");
  }
  std::cout << absl::StrFormat(
      "\ngain over training alone at %s%s, %d repeat%s%s:\n", judged,
      advice.game_collaborates ? "" : " (without noise: the best case)", repeats,
      repeats == 1 ? "" : "s",
      seeds.empty() ? std::string()
                    : absl::StrFormat(" (seeds %d..%d)", seeds.front(), seeds.back()));
  for (int n = 0; n < 2; ++n) {
    const fmf::GainSummary& g = advice.gain[n];
    std::cout << absl::StrFormat(
        "  player %d: mean %s%s: %s\n", n + 1, std::isnan(g.mean) ? "-" : Percent(g.mean),
        g.sd ? absl::StrFormat(" (sd %s)", Percent(*g.sd)) : "", fmf::GainVerdictSentence(g));
  }
  std::cout << "\nrecommendation: " << rec.reason << "\n";
  std::cout << "measurement cost: " << cost.note;
  if (a.mode == "joint" && a.grid_from.empty()) {
    std::cout << absl::StrFormat(
        " (epsilon %s / %s)",
        std::isinf(cost.epsilon[0]) ? "inf" : absl::StrFormat("%.2f", cost.epsilon[0]),
        std::isinf(cost.epsilon[1]) ? "inf" : absl::StrFormat("%.2f", cost.epsilon[1]));
  }
  std::cout << "\n";
  return 0;
}

}  // namespace

void RegisterAdviseCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<AdviseFlags>();
  CLI::App* cmd = app.add_subcommand(
      "advise", "should two parties collaborate, and how privately? (Price of Privacy game)");
  // The cross-silo settings BuildJobConfig takes; the game is meant for these three.
  AddSettingFlag(cmd, &a->job.setting,
                 {SettingKind::kCentral, SettingKind::kLocal, SettingKind::kVfl, SettingKind::kHfl,
                  SettingKind::kHflSynSgd, SettingKind::kCoupling})
      ->description("hfl | hfl-synsgd | vfl");
  cmd->add_option("--party-data", a->party_data,
                  "a party's ratings (movielens:PATH | csv:PATH | synthetic:...); give it twice")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--mode", a->mode,
                  "joint (both parties' data) | self-division (each on its own data split in "
                  "two) | proxy (synthetic data of the same shape: costs no privacy)")
      ->capture_default_str();
  cmd->add_option("--epsilons", a->epsilons,
                  "the finite epsilons of the grid; inf (no noise) and alone are always added")
      ->capture_default_str();
  cmd->add_option("--weights", a->weights,
                  "B1,C1,B2,C2: accuracy and privacy weight of each player")
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats,
                  "measure the grid N times with seeds --seed .. --seed+N-1 (a new split, new "
                  "noise, new proxy data each): the game is played on the mean grid and a "
                  "collaboration is recommended only when both players' gains lie above 0 in "
                  "their 95% intervals over the repeats")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--plot", a->plot, "write the gain maps and equilibria as SVG");
  cmd->add_option("--grid-from", a->grid_from,
                  "replay the game on the grid of an earlier --json output (no measurement)");
  cmd->add_option("--validation-fraction", a->validation_fraction,
                  "share of each party's ratings held out to measure its error")
      ->capture_default_str();
  cmd->add_option("--granularity", a->job.granularity, "rating | user | default")
      ->capture_default_str();
  cmd->add_option("--delta", a->job.delta, "delta")->capture_default_str();
  cmd->add_option("--T", a->job.rounds, "rounds")->capture_default_str();
  cmd->add_option("--T-local", a->job.local_iters, "local iterations per round")
      ->capture_default_str();
  cmd->add_option("--kappa", a->job.kappa, "VFL Stage-3 iterations")->capture_default_str();
  cmd->add_option("--pretrain-epochs", a->job.pretrain_epochs, "Stage-1 epochs")
      ->capture_default_str();
  cmd->add_option("--finetune-epochs", a->job.finetune_epochs, "Stage-3 epochs")
      ->capture_default_str();
  cmd->add_option("--central-epochs", a->job.central_epochs, "epochs of training alone")
      ->capture_default_str();
  cmd->add_option("--dim", a->job.dim, "latent dimension")->capture_default_str();
  cmd->add_option("--sample-rate", a->job.sample_rate, "eta")->capture_default_str();
  cmd->add_option("--lr", a->job.lr, "Stage-2 learning rate (0: the default)")
      ->capture_default_str();
  cmd->add_option("--rating-range", a->job.rating_range,
                  "declared rating scale MIN,MAX (ML-100K: 1,5)");
  cmd->add_option("--rating-min", a->job.rating_min, "declared minimum rating");
  cmd->add_option("--seed", a->job.seed, "local reproducibility seed (splits and noise)");
  cmd->add_flag("--json", a->job.json, "print one JSON object");
  cmd->add_flag("--quiet", a->job.quiet, "no progress lines");
  cmd->callback([a, exit_code] { *exit_code = RunAdvise(*a); });
}

}  // namespace fedmf::cli
