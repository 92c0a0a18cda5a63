#include "tools/fedmf/train_command.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/allocator.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "common/fmf/gain.h"
#include "common/fmf/saved_model.h"
#include "common/fmf/simulator.h"
#include "common/fmf/tuning.h"
#include "common/plot/svg_chart.h"
#include "tools/fedmf/accounting_json.h"
#include "tools/fedmf/cdr_train.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/comparison.h"
#include "tools/fedmf/coupling_train.h"
#include "tools/fedmf/gain_sweep.h"
#include "tools/fedmf/hua_train.h"
#include "tools/fedmf/job_flags.h"
#include "tools/fedmf/job_progress.h"
#include "tools/fedmf/lfl_train.h"
#include "tools/fedmf/train_data.h"

namespace fedmf::cli {
namespace {

// --algorithm stats: both guarantees, the releases' noise, and what the
// parties' validation chose.
void AddStatsPlanJson(const fmf::StatsPlan& plan, bool charge_alone,
                      const std::vector<fmf::PartyResult>& parties, nlohmann::json& out) {
  nlohmann::json releases = nlohmann::json::array();
  for (const fmf::StatsReleasePlan& r : plan.releases) {
    releases.push_back({{"dim", r.dim},
                        {"sensitivity", r.sensitivity},
                        {"share_sigma", r.share_sigma},
                        {"sum_sigma", r.sum_sigma}});
  }
  int federated = 0;
  for (const fmf::PartyResult& p : parties) federated += p.model_kind == "federated" ? 1 : 0;
  out["epsilon_alone"] = JsonNumber(plan.epsilon_alone);
  out["max_colluding_parties"] = plan.colluding;
  out["charged"] = charge_alone ? "epsilon_alone" : "epsilon";
  out["gdp_mu"] = JsonNumber(plan.mu);
  out["releases"] = releases;
  out["parties_federated"] = federated;
  out["model_kind"] = federated * 2 >= static_cast<int>(parties.size()) ? "federated" : "own";
}

nlohmann::json ResultJson(const fmf::SimulationResult& r, const std::string& data_spec) {
  nlohmann::json parties = nlohmann::json::array();
  for (const auto& p : r.parties) {
    parties.push_back({{"party", p.party},
                       {"users", p.users},
                       {"items", p.items},
                       {"train_ratings", p.train_ratings},
                       {"test_ratings", p.test.count},
                       {"test_mse", p.test.mse},
                       {"test_rmse", p.test.rmse},
                       {"epsilon", JsonNumber(p.epsilon)},
                       {"steps", p.steps},
                       {"learning_rate", p.learning_rate},
                       {"ranking_rule",
                        {{"shrinkage", p.ranking_rule.shrinkage},
                         {"popularity_weight", p.ranking_rule.popularity_weight}}}});
    if (!p.model_kind.empty()) {
      parties.back()["model_kind"] = p.model_kind;
      parties.back()["others_weight"] = p.others_weight;
    }
  }
  nlohmann::json out = {{"setting", fmf::SettingName(r.config.setting)},
                        {"split", fmf::SplitKindName(r.config.split)},
                        {"data", data_spec},
                        {"granularity", fmf::GranularityName(r.config.granularity)},
                        {"theta", r.plan.theta},
                        {"clip_norm", r.plan.clip_norm},
                        {"test_mse", r.test.mse},
                        {"test_rmse", r.test.rmse},
                        {"test_mae", r.test.mae},
                        {"train_mse", r.train.mse},
                        {"epsilon", JsonNumber(r.epsilon)},
                        {"epsilon_target", JsonNumber(r.config.epsilon)},
                        {"delta", r.config.delta},
                        // The size release (docs/privacy.md, section size-release).
                        {"count_sigma", r.plan.count_sigma},
                        {"rounds", r.rounds},
                        {"local_iters", r.config.EffectiveLocalIters()},
                        {"dim", r.config.dim},
                        // Per-user clipping without --lr: each party's own rule value
                        // (per_party[].learning_rate); otherwise the one rate of every party.
                        {"learning_rate", r.parties.empty() ? r.config.EffectiveLearningRate()
                                                            : r.parties.front().learning_rate},
                        {"parties", static_cast<int>(r.parties.size())},
                        {"algorithm", fmf::AlgorithmName(r.config.algorithm)},
                        // The trainer of central / local-only models (and of
                        // the --compare baselines).
                        {"engine", fmf::EngineName(r.config.engine)},
                        {"seconds", r.seconds},
                        {"per_party", parties}};
  // sampling_unit, sample_rate, noise_multiplier, steps, count_noise_multiplier
  // and how epsilon composes them (issue #54: recomputable from the JSON).
  AddFmfAccounting(r.config, r.plan, static_cast<int>(r.parties.size()), out);
  if (r.validation.count > 0) {
    out["validation_mse"] = r.validation.mse;
    out["validation_ratings"] = r.validation.count;
  }
  if (r.epsilon_per_user_global) {
    out["epsilon_per_user_global"] = JsonNumber(*r.epsilon_per_user_global);
  }
  if (r.ranking.users > 0) {
    out["ranking"] = RankingJson(r.ranking);
    out["ranking_most_popular"] = RankingJson(r.popularity);
    out["ranking_by_prediction"] = RankingJson(r.ranking_by_prediction);
  }
  if (r.stats_plan)
    AddStatsPlanJson(*r.stats_plan, r.config.stats.charge_epsilon_alone, r.parties, out);
  return out;
}

void PrintSummary(const fmf::SimulationResult& r) {
  std::cout << absl::StrFormat("\n%-6s %7s %7s %9s %9s %9s %10s\n", "party", "users", "items",
                               "train", "test", "test MSE", "epsilon");
  for (const auto& p : r.parties) {
    std::cout << absl::StrFormat(
        "%-6d %7d %7d %9d %9d %9.4f %10s\n", p.party, p.users, p.items, p.train_ratings,
        p.test.count, p.test.mse,
        std::isinf(p.epsilon) ? "inf" : absl::StrFormat("%.4f", p.epsilon));
  }
  // A non-private run has no noise and no DP steps: say so instead of z = 0.
  // Algorithm stats has no SGD plan (r.plan is empty): its own says it.
  std::string privacy;
  if (r.stats_plan && r.stats_plan->private_training) {
    const fmf::StatsPlan& sp = *r.stats_plan;
    privacy = absl::StrFormat(
        "epsilon %.4f at delta %g against the server and %d colluding part%s, %.4f if all the "
        "others collude (Gaussian DP, mu %.4f, %d releases; noise once among the parties)",
        sp.epsilon, sp.delta, sp.colluding, sp.colluding == 1 ? "y" : "ies", sp.epsilon_alone,
        sp.mu, static_cast<int>(sp.releases.size()));
  } else if (std::isinf(r.epsilon) || (!r.stats_plan && r.plan.noise_multiplier <= 0)) {
    privacy = "non-private (no noise)";
  } else {
    privacy = absl::StrFormat("epsilon %.4f at delta %g (z = %.4f, %d DP steps)", r.epsilon,
                              r.config.delta, r.plan.noise_multiplier, r.plan.steps);
  }
  const std::string split = r.config.split == fmf::SplitKind::kNone
                                ? std::string("one data set")
                                : absl::StrCat(fmf::SplitKindName(r.config.split), " split");
  std::cout << absl::StrFormat(
      "\n%s (%s, %s-level): test MSE %.4f, RMSE %.4f over %d ratings; %s; %d parties, %d rounds, "
      "%.1f s\n",
      fmf::SettingName(r.config.setting), split, fmf::GranularityName(r.config.granularity),
      r.test.mse, r.test.rmse, r.test.count, privacy, static_cast<int>(r.parties.size()), r.rounds,
      r.seconds);
  if (r.epsilon_per_user_global) {
    std::cout << absl::StrFormat(
        "per-user epsilon over all %d parties (a user's ratings sit at every party; RDP curves "
        "composed): %.4f\n",
        static_cast<int>(r.parties.size()), *r.epsilon_per_user_global);
  }
  if (r.ranking.users > 0) PrintRanking(r.ranking, r.popularity);
}

// --save-model DIR: every party's final model (common/fmf/saved_model.h),
// for fedmf recommend --model DIR, offline.
absl::Status SaveModels(const std::string& dir, const TrainData& loaded,
                        const fmf::SimulationResult& result) {
  fmf::SavedModel model;
  model.setting = fmf::SettingName(result.config.setting);
  model.job = loaded.label;
  for (size_t k = 0; k < result.parties.size(); ++k) {
    const fmf::PartyResult& r = result.parties[k];
    ASSIGN_OR_RETURN(fmf::SavedPartyModel party,
                     fmf::PartyModelFrom(absl::StrCat("party-", k), loaded.federation.parties[k],
                                         r.user_embeddings, r.item_embeddings, r.rating_offset,
                                         loaded.user_ids, loaded.item_ids, r.ranking_rule));
    model.parties.push_back(std::move(party));
  }
  return fmf::WriteSavedModel(dir, model);
}

// --plot: the simulator's rounds as the same three charts the server's
// history gives (common/net/job_view.h), parties named party-K. On the MSE
// chart each party's final model (after Stage 3: the error the summary
// prints) is the marked last point, one round after the last; with
// --compare the local-only and central baselines (all parties' test ratings
// pooled) are dashed lines.
std::vector<plot::LineChart> TrainCharts(const std::vector<fmf::RoundProgress>& rounds,
                                         const fmf::SimulationResult& result,
                                         const std::optional<Comparison>& comparison) {
  plot::LineChart mse{"mse",
                      comparison ? "test MSE per party; dashed: baselines on all parties' ratings"
                                 : "test MSE per party",
                      "round (marked: the final model)",
                      "test MSE",
                      {}};
  plot::LineChart eps{"epsilon", "epsilon per party", "round", "epsilon", {}};
  plot::LineChart secs{"seconds", "round duration", "round", "seconds", {{"round time", {}}}};
  double before = 0;
  for (const fmf::RoundProgress& r : rounds) {
    for (size_t k = 0; k < r.party_epsilon.size(); ++k) {
      if (eps.series.size() <= k) eps.series.push_back({absl::StrCat("party-", k), {}});
      eps.series[k].points.emplace_back(r.round, r.party_epsilon[k]);
    }
    for (size_t k = 0; k < r.party_test_mse.size(); ++k) {
      if (mse.series.size() <= k) mse.series.push_back({absl::StrCat("party-", k), {}});
      mse.series[k].points.emplace_back(r.round, r.party_test_mse[k]);
    }
    secs.series[0].points.emplace_back(r.round, r.seconds - before);
    before = r.seconds;
  }
  const double final_x = (rounds.empty() ? result.rounds : rounds.back().round) + 1;
  for (size_t k = 0; k < result.parties.size(); ++k) {
    if (result.parties[k].test.count == 0) continue;
    while (mse.series.size() <= k) {
      mse.series.push_back({absl::StrCat("party-", mse.series.size()), {}});
    }
    mse.series[k].final_point = {{final_x, result.parties[k].test.mse}};
  }
  if (comparison) {
    mse.references = {{"local only", comparison->mse_local}, {"central", comparison->mse_central}};
  }
  return {mse, eps, secs};
}

// --write-split DIR (central): the split this run trains and tests on, as
// "user item rating" lines with dense 0-based ids (LIBMF's text format), so
// another engine runs on exactly these ratings (docs/benchmarks.md, LIBMF).
absl::Status WriteSplit(const std::string& dir, const data::PartyData& party) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat(dir, ": ", ec.message()));
  for (const auto& [name, ratings] :
       {std::pair{"train.txt", &party.train}, std::pair{"test.txt", &party.test}}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path);
    for (const data::Rating& r : *ratings) {
      out << absl::StrFormat("%d %d %g\n", r.user, r.item, r.value);
    }
    out.close();
    if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

// --tune: the learning rate with the lowest test MSE on a synthetic proxy of
// the loaded federation's shape (common/fmf/tuning.h).
absl::StatusOr<fmf::TuneResult> TuneOnProxy(const JobFlags& a, const TrainData& loaded) {
  const fmf::Setting setting = loaded.config.setting;
  if (setting != fmf::Setting::kVfl && setting != fmf::Setting::kHfl &&
      setting != fmf::Setting::kHflSynSgd) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tunes the learning rate of vfl, hfl and hfl-synsgd, not ", SettingName(a.setting)));
  }
  if (a.lr > 0) {
    return absl::InvalidArgumentError("chooses the learning rate itself: give --tune or --lr");
  }
  if (a.tune_shape.empty()) {
    return absl::InvalidArgumentError(
        "needs the proxy's shape declared as public: --tune-shape users=N,items=M,ratings=R "
        "(e.g. a published data set's sizes). It is not taken from the data: the parties' exact "
        "rating count is private (docs/privacy.md, section tuning)");
  }
  ASSIGN_OR_RETURN(const fmf::ProxyShape shape, fmf::ParseProxyShape(a.tune_shape));
  // Only declared values and the job's own parameters (range, test
  // fraction, parties): nothing of loaded.federation's ratings or sizes.
  ASSIGN_OR_RETURN(data::Federation proxy,
                   fmf::ProxyOfShape(shape, loaded.federation.range,
                                     static_cast<int32_t>(loaded.federation.parties.size()),
                                     loaded.config, a.seed.value_or(1)));
  const std::vector<double> grid = fmf::LearningRateGrid(loaded.config);
  if (!a.quiet) {
    std::cerr << absl::StrFormat(
        "tuning the learning rate on a synthetic proxy (%d users x %d items, %d parties): %s\n",
        proxy.num_users, proxy.num_items, proxy.parties.size(), absl::StrJoin(grid, ", "));
  }
  ASSIGN_OR_RETURN(fmf::TuneResult result,
                   fmf::TuneLearningRateOnProxy(loaded.config, proxy, grid));
  if (!a.quiet) {
    for (const fmf::TuneCandidate& c : result.grid) {
      std::cerr << absl::StrFormat("  lr %-6g proxy test MSE %.4f%s\n", c.learning_rate,
                                   c.proxy_test_mse,
                                   c.learning_rate == result.learning_rate ? "  <- chosen" : "");
    }
  }
  return result;
}

nlohmann::json TuningJson(const fmf::TuneResult& t) {
  nlohmann::json grid = nlohmann::json::array();
  for (const fmf::TuneCandidate& c : t.grid) {
    grid.push_back({{"learning_rate", c.learning_rate}, {"proxy_test_mse", c.proxy_test_mse}});
  }
  // learning_rate 0 is the setting's noise-aware rule (HFL per-user clipping).
  return {{"mode", "proxy"}, {"learning_rate", t.learning_rate}, {"grid", grid}};
}

// --repeats / --epsilon-sweep (with --compare): the gain and its spread.
int RunSweep(const JobFlags& a) {
  const auto usage = [](const std::string& why) {
    return Report("fedmf train", absl::InvalidArgumentError(why));
  };
  if (!a.compare) return usage("--repeats and --epsilon-sweep report the gain: add --compare");
  if (!IsFederatedFmf(a.setting)) {
    return usage(absl::StrCat("--repeats and --epsilon-sweep run hfl, vfl and hfl-synsgd, not ",
                              SettingName(a.setting)));
  }
  if (a.tune || !a.save_model.empty() || !a.write_split.empty()) {
    return usage(
        "--repeats / --epsilon-sweep do not combine with --tune, --save-model or --write-split");
  }
  std::vector<double> epsilons;
  if (a.epsilon_sweep.empty()) {
    auto e = ParseEpsilon(a.epsilon, "--epsilon");
    if (!e.ok()) return Report("fedmf train", e.status());
    epsilons.push_back(*e);
  } else {
    auto list = ParseEpsilonList(a.epsilon_sweep);
    if (!list.ok()) return Report("fedmf train", list.status());
    epsilons = *list;
  }
  auto sweep = RunGainSweep(a, epsilons, a.repeats, [&](const SweepRun& r) {
    if (a.quiet) return;
    std::cerr << absl::StrFormat("seed %d epsilon %g: test MSE %.4f, gain %s\n", r.seed, r.epsilon,
                                 r.mse_federated,
                                 r.gain ? absl::StrFormat("%.1f%%", 100 * *r.gain) : "-");
  });
  if (!sweep.ok()) return Report("fedmf train", sweep.status());
  const std::string label =
      absl::StrCat(SettingName(a.setting), " ", a.algorithm.empty() ? "default" : a.algorithm);
  if (!a.plot.empty()) {
    if (auto s = WritePlot(a.plot, {GainSweepChart(*sweep, label)}); !s.ok()) {
      return Report("fedmf train", RuntimeError(s));
    }
    std::cerr << "gain-against-epsilon plot written to " << a.plot << "\n";
  }
  if (a.json) {
    nlohmann::json out = GainSweepJson(*sweep);
    out["setting"] = SettingName(a.setting);
    out["algorithm"] = a.algorithm.empty() ? "default" : a.algorithm;
    out["data"] = a.data;
    out["parties"] = a.parties;
    out["repeats"] = a.repeats;
    if (sweep->points.size() == 1) {  // one epsilon: its summary at the top level
      for (const char* key : {"gain_captured", "gain_captured_sd", "gain_captured_ci95",
                              "gain_verdict", "gain_distinguishable"}) {
        out[key] = out["sweep"][0][key];
      }
    }
    std::cout << out.dump() << "\n";
  } else {
    PrintGainSweep(*sweep, label);
  }
  return 0;
}

// `fedmf train`'s algorithm when none is given: stats for hfl and for vfl per
// rating, where it beats alternate at every epsilon on ML-100K (issue #53,
// docs/results.md section stats); alternate elsewhere (vfl per user has no
// stats release). `fedmf demo` keeps alternate: the daemons do not run stats
// yet (AdmittedJob refuses it). One party alone has nobody to add noise
// with (stats needs s >= 2): alternate.
JobFlags WithTrainDefaults(JobFlags a) {
  if (!a.algorithm.empty()) return a;
  const size_t parties =
      a.party_data.empty() ? static_cast<size_t>(a.parties) : a.party_data.size();
  if (parties < 2) return a;
  if (a.setting == SettingKind::kHfl ||
      (a.setting == SettingKind::kVfl && a.granularity != "user")) {
    a.algorithm = "stats";
  }
  return a;
}

// The output flags each need a setting that has what they write (exit 2).
absl::Status CheckTrainOutputs(const JobFlags& a) {
  const std::string setting = SettingName(a.setting);
  if (!a.write_split.empty() && a.setting != SettingKind::kCentral) {
    return absl::InvalidArgumentError(
        absl::StrCat("--write-split writes the central setting's split, not ", setting, "'s"));
  }
  if (!a.save_model.empty() &&
      (!FmfSettingOf(a.setting).has_value() || a.setting == SettingKind::kCoupling)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--save-model works with the cross-silo settings (central, local, hfl, "
                     "hfl-synsgd, vfl), not ",
                     setting));
  }
  if (!a.plot.empty() && !IsFederatedFmf(a.setting)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--plot draws the rounds of vfl, hfl and hfl-synsgd, not ", setting));
  }
  return absl::OkStatus();
}

// Step 1 of a cross-silo run: the data split among the parties, the job,
// and with --tune the learning rate chosen on a proxy.
struct FmfTrainInput {
  TrainData loaded;
  std::optional<fmf::TuneResult> tuning;
};

absl::StatusOr<FmfTrainInput> LoadFmfTrainInput(const JobFlags& a) {
  FmfTrainInput in;
  ASSIGN_OR_RETURN(in.loaded, LoadTrainData(a));
  for (const std::string& warning : in.loaded.warnings) std::cerr << warning << "\n";
  // What the split freed (the data set's id texts, which only --save-model
  // keeps a copy of): 2.6 MB less resident through a 5.3M-rating run's
  // training. Loading's own garbage went back before the split (train_data.cc).
  base::ReturnFreeMemory();
  if (a.tune) {
    absl::StatusOr<fmf::TuneResult> tuned = TuneOnProxy(a, in.loaded);
    if (!tuned.ok()) return WithPrefix(tuned.status(), "--tune: ");
    in.tuning = *tuned;
    in.loaded.config.learning_rate = in.tuning->learning_rate;
  }
  return in;
}

// Step 2: the rounds, with a progress line per evaluated round (and a bar
// on a terminal); `history` keeps them for --plot.
absl::StatusOr<fmf::SimulationResult> SimulateWithProgress(
    const JobFlags& a, TrainData& loaded, std::vector<fmf::RoundProgress>& history) {
  const bool terminal = !a.quiet && isatty(STDERR_FILENO) != 0;
  fmf::ProgressFn progress = [&](const fmf::RoundProgress& p) {
    if (!a.plot.empty()) history.push_back(p);
    if (a.quiet) return;
    if (terminal) std::cerr << "\r\033[K";  // the bar is redrawn below the lines
    std::cerr << absl::StrFormat("round %4d/%d  %7.2fs  epsilon %-8s  test MSE %s\n", p.round,
                                 p.total_rounds, p.seconds,
                                 p.epsilon > 0 ? absl::StrFormat("%.4f", p.epsilon) : "-",
                                 p.test_mse ? absl::StrFormat("%.4f", *p.test_mse) : "-");
    if (terminal) {
      Progress bar{p.round, p.total_rounds, p.seconds, std::nullopt};
      if (p.round > 0 && p.round < p.total_rounds) {
        bar.eta_seconds = p.seconds / p.round * (p.total_rounds - p.round);
      }
      std::cerr << ProgressBar(bar) << std::flush;
    }
  };
  // The parties' ratings move into the run unless --compare or --save-model
  // read them afterwards: a central run on millions of ratings holds them once.
  data::Federation run_federation;
  if (a.compare || !a.save_model.empty()) {
    run_federation = loaded.federation;
  } else {
    run_federation = std::move(loaded.federation);
  }
  // Top-N quality beside the error (the parties' test ratings; mf/ranking.h).
  loaded.config.measure_ranking = true;
  auto result = fmf::Simulate(loaded.config, std::move(run_federation), progress, a.eval_every);
  if (terminal) std::cerr << "\r\033[K" << std::flush;
  return result;
}

// Step 3: --json or the summary table.
void PrintTrainResult(const JobFlags& a, const FmfTrainInput& in,
                      const fmf::SimulationResult& result,
                      const std::optional<Comparison>& comparison) {
  const TrainData& loaded = in.loaded;
  if (a.json) {
    nlohmann::json out = ResultJson(result, loaded.label);
    if (loaded.join) {
      out["party_data"] = a.party_data;
      out["join"] = *loaded.join;
      if (loaded.join->contains("shared_items"))
        out["shared_items"] = (*loaded.join)["shared_items"];
      if (loaded.join->contains("shared_users"))
        out["shared_users"] = (*loaded.join)["shared_users"];
    }
    if (comparison) {
      AddComparisonJson(*comparison, out);
      AddRankingComparisonJson(*comparison, out);
    }
    if (in.tuning) out["tuning"] = TuningJson(*in.tuning);
    if (!loaded.warnings.empty()) out["warnings"] = loaded.warnings;
    std::cout << out.dump() << "\n";
    return;
  }
  PrintSummary(result);
  for (const std::string& note : loaded.notes) std::cout << note << "\n";
  for (const std::string& warning : loaded.warnings) std::cout << warning << "\n";
  if (comparison) {
    PrintComparison(*comparison,
                    absl::StrCat(fmf::SettingName(result.config.setting), " (",
                                 fmf::AlgorithmName(result.config.algorithm), ")"),
                    result.test.mse);
    PrintRankingComparison(*comparison, result.ranking, result.popularity);
  }
}

// The cross-silo settings (central, local, vfl, hfl, hfl-synsgd) in one
// process: load (and tune), write the split, simulate, then what the output
// flags ask (saved models, baselines, plot) and the result.
int RunFmfTrain(const JobFlags& a) {
  absl::StatusOr<FmfTrainInput> in = LoadFmfTrainInput(a);
  if (!in.ok()) return Report("fedmf train", in.status());
  const TrainData& loaded = in->loaded;
  if (!a.write_split.empty()) {
    if (auto s = WriteSplit(a.write_split, loaded.federation.parties.at(0)); !s.ok()) {
      return Report("fedmf train: --write-split", RuntimeError(s));
    }
    std::cerr << "train/test split written to " << a.write_split << "/{train,test}.txt\n";
  }
  std::vector<fmf::RoundProgress> history;  // for --plot
  auto result = SimulateWithProgress(a, in->loaded, history);
  if (!result.ok()) return Report("fedmf train", RuntimeError(result.status()));
  if (!a.save_model.empty()) {
    if (auto saved = SaveModels(a.save_model, loaded, *result); !saved.ok()) {
      return Report(absl::StrCat("fedmf train: --save-model ", a.save_model), RuntimeError(saved));
    }
    std::cerr << "models of " << result->parties.size() << " parties saved in " << a.save_model
              << " (fedmf recommend --model " << a.save_model << " --user ID)\n";
  }
  std::optional<Comparison> comparison;
  if (a.compare) {
    auto c = RunComparison(loaded.config, loaded.federation, result->test.mse);
    if (!c.ok()) return Report("fedmf train: --compare", RuntimeError(c.status()));
    comparison = *c;
  }
  if (!a.plot.empty()) {
    if (auto s = WritePlot(a.plot, TrainCharts(history, *result, comparison)); !s.ok()) {
      return Report("fedmf train", RuntimeError(s));
    }
    std::cerr << "per-round plot written to " << a.plot << "\n";
  }
  PrintTrainResult(a, *in, *result, comparison);
  return 0;
}

// How `fedmf train` runs each setting; --setting takes exactly these. A new
// setting is one row (and its value in setting_kind.h).
struct TrainRunner {
  SettingKind setting;
  int (*run)(const JobFlags&);
  // The runner checks --repeats, --epsilon-sweep and the outputs itself
  // (a setting with neither a sweep nor a saved model says so in its terms).
  bool checks_own_outputs = false;
};
constexpr TrainRunner kTrainRunners[] = {
    {SettingKind::kCentral, RunFmfTrain},       {SettingKind::kLocal, RunFmfTrain},
    {SettingKind::kVfl, RunFmfTrain},           {SettingKind::kHfl, RunFmfTrain},
    {SettingKind::kHflSynSgd, RunFmfTrain},     {SettingKind::kLfl, RunLflTrain},
    {SettingKind::kHuaS1, RunHuaTrain},         {SettingKind::kHuaS2, RunHuaTrain},
    {SettingKind::kHuaS2Tp, RunHuaTrain},       {SettingKind::kHuaS3, RunHuaTrain},
    {SettingKind::kCoupling, RunCouplingTrain}, {SettingKind::kCdr, RunCdrTrain, true},
};

std::vector<SettingKind> TrainSettings() {
  std::vector<SettingKind> settings;
  for (const TrainRunner& r : kTrainRunners) settings.push_back(r.setting);
  return settings;
}

int RunTrain(const JobFlags& flags) {
  const JobFlags a = WithTrainDefaults(flags);
  const TrainRunner* runner = nullptr;
  for (const TrainRunner& r : kTrainRunners) {
    if (r.setting == a.setting) runner = &r;
  }
  if (runner != nullptr && runner->checks_own_outputs) return runner->run(a);
  if (absl::Status s = CheckTrainOutputs(a); !s.ok()) return Report("fedmf train", s);
  if (a.repeats > 1 || !a.epsilon_sweep.empty()) return RunSweep(a);
  if (runner != nullptr) return runner->run(a);
  // A job file's setting that train has no runner for.
  return Report("fedmf train", ParseSettingKind(SettingName(a.setting), TrainSettings()).status());
}

}  // namespace

void RegisterTrainCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<JobFlags>();
  CLI::App* cmd = app.add_subcommand("train", "run a whole federation in one process");
  AddJobFlags(cmd, a.get(), TrainSettings());
  AddCdrTrainFlags(cmd);
  cmd->add_option("--save-model", a->save_model,
                  "write every party's final model to this directory, for fedmf recommend "
                  "--model DIR (offline); it holds private embeddings: keep it with the party");
  cmd->add_option("--write-split", a->write_split,
                  "central: also write the train/test split as DIR/train.txt and DIR/test.txt "
                  "(user item rating, dense 0-based ids; LIBMF's format) to run another engine "
                  "on the same ratings");
  cmd->add_option("--plot", a->plot,
                  "write test MSE (every --eval-every rounds), epsilon and round time per round "
                  "as SVG (vfl, hfl, hfl-synsgd)");
  cmd->add_option("--repeats", a->repeats,
                  "with --compare: run N times with seeds --seed .. --seed+N-1 (a new split and "
                  "new noise each) and report gain_captured as the mean, gain_captured_sd and its "
                  "95% interval")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--epsilon-sweep", a->epsilon_sweep,
                  "with --compare: run at each of these epsilons (e.g. 1,4,16,64,256,inf) on the "
                  "same splits and print gain captured against epsilon (--plot draws it)");
  cmd->add_flag("--tune", a->tune,
                "vfl, hfl, hfl-synsgd: choose the learning rate first, on a synthetic proxy of the "
                "shape --tune-shape declares (with the job's range, test fraction and parties): "
                "the rate with the lowest test MSE on the proxy; reads nothing of the data, so it "
                "costs no privacy, and never reads the real test set (docs/privacy.md, section "
                "tuning)");
  cmd->add_option("--tune-shape", a->tune_shape,
                  "--tune: the proxy's users, items and rating count as public values you "
                  "declare (the parties' exact counts are private), e.g. "
                  "users=943,items=1682,ratings=100000");
  cmd->callback([a, cmd, exit_code] {
    a->data_given = cmd->count("--data") > 0;
    a->parties_given = cmd->count("--parties") > 0;
    if (auto s = ApplyJobFile(*cmd, *a); !s.ok() || !(s = CheckFlagCombination(*a)).ok()) {
      *exit_code = Report("fedmf train", s);
      return;
    }
    // hua settings default to the paper's d = 50 unless --dim (or the job file) sets it
    a->dim_given = cmd->count("--dim") > 0 || a->job_file_keys.contains("dim");
    *exit_code = RunTrain(*a);
  });
}

}  // namespace fedmf::cli
