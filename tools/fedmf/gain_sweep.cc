#include "tools/fedmf/gain_sweep.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/fmf/simulator.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/train_data.h"

namespace fedmf::cli {
namespace {

std::string EpsilonText(double e) {
  return std::isinf(e) ? std::string("inf") : absl::StrFormat("%g", e);
}

std::string Percent(const std::optional<double>& g) {
  return g ? absl::StrFormat("%.1f%%", 100 * *g) : std::string("-");
}

}  // namespace

absl::StatusOr<std::vector<double>> ParseEpsilonList(const std::string& text) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    ASSIGN_OR_RETURN(double e, ParseEpsilon(std::string(part), "--epsilon-sweep"));
    out.push_back(e);
  }
  if (out.empty()) return absl::InvalidArgumentError("--epsilon-sweep: give at least one epsilon");
  return out;
}

absl::StatusOr<GainSweep> RunGainSweep(const JobFlags& flags, const std::vector<double>& epsilons,
                                       int32_t repeats,
                                       const std::function<void(const SweepRun&)>& on_run) {
  if (repeats < 1) return absl::InvalidArgumentError("--repeats must be >= 1");
  if (epsilons.empty()) return absl::InvalidArgumentError("no epsilon to run");
  GainSweep sweep;
  sweep.epsilons = epsilons;
  sweep.repeats = repeats;
  sweep.points.resize(epsilons.size());
  for (size_t e = 0; e < epsilons.size(); ++e) sweep.points[e].epsilon = epsilons[e];
  const uint64_t first = flags.seed.value_or(1);
  for (int32_t r = 0; r < repeats; ++r) {
    JobFlags run = flags;
    run.seed = first + static_cast<uint64_t>(r);
    sweep.seeds.push_back(*run.seed);
    ASSIGN_OR_RETURN(TrainData loaded, LoadTrainData(run));
    // The baselines do not depend on epsilon: once per split.
    ASSIGN_OR_RETURN(Comparison baseline, RunComparison(loaded.config, loaded.federation,
                                                        std::numeric_limits<double>::quiet_NaN()));
    sweep.baselines.push_back(baseline);
    for (size_t e = 0; e < epsilons.size(); ++e) {
      fmf::JobConfig config = loaded.config;
      config.epsilon = epsilons[e];
      RETURN_IF_ERROR(fmf::ValidateJobConfig(config));
      ASSIGN_OR_RETURN(fmf::SimulationResult result, fmf::Simulate(config, loaded.federation));
      SweepRun s;
      s.epsilon = epsilons[e];
      s.repeat = r;
      s.seed = *run.seed;
      s.mse_federated = result.test.mse;
      s.validation_mse = result.validation.mse;
      s.gain = fmf::GainCaptured(baseline.mse_local, result.test.mse, baseline.mse_central);
      s.epsilon_spent = result.epsilon;
      if (result.stats_plan) {
        s.epsilon_alone = result.stats_plan->epsilon_alone;
        int federated = 0;
        for (const fmf::PartyResult& p : result.parties) federated += p.model_kind == "federated";
        s.model_kind =
            federated * 2 >= static_cast<int>(result.parties.size()) ? "federated" : "own";
      }
      if (on_run) on_run(s);
      sweep.points[e].runs.push_back(s);
    }
  }
  for (SweepPoint& p : sweep.points) {
    std::vector<std::optional<double>> gains;
    double mse = 0;
    for (const SweepRun& s : p.runs) {
      gains.push_back(s.gain);
      mse += s.mse_federated;
    }
    p.gain = fmf::SummarizeGains(gains);
    p.mse_federated_mean = mse / static_cast<double>(p.runs.size());
  }
  return sweep;
}

nlohmann::json GainSweepJson(const GainSweep& sweep) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json points = nlohmann::json::array();
  for (const SweepPoint& p : sweep.points) {
    nlohmann::json runs = nlohmann::json::array();
    for (const SweepRun& s : p.runs) {
      nlohmann::json j = {{"seed", s.seed},
                          {"test_mse", s.mse_federated},
                          {"validation_mse", s.validation_mse},
                          {"gain_captured", opt(s.gain)},
                          {"epsilon", JsonNumber(s.epsilon_spent)}};
      if (s.epsilon_alone) j["epsilon_alone"] = JsonNumber(*s.epsilon_alone);
      if (!s.model_kind.empty()) j["model_kind"] = s.model_kind;
      runs.push_back(j);
    }
    nlohmann::json point = {
        {"epsilon", JsonNumber(p.epsilon)},
        {"repeats", p.gain.count},
        {"gain_captured",
         std::isnan(p.gain.mean) ? nlohmann::json(nullptr) : nlohmann::json(p.gain.mean)},
        {"gain_captured_sd", opt(p.gain.sd)},
        {"test_mse_mean", p.mse_federated_mean},
        {"runs", runs}};
    point["gain_captured_ci95"] = p.gain.ci95_low
                                      ? nlohmann::json::array({*p.gain.ci95_low, *p.gain.ci95_high})
                                      : nlohmann::json(nullptr);
    const fmf::GainVerdict verdict = fmf::JudgeGain(p.gain);
    point["gain_verdict"] = fmf::GainVerdictName(verdict);
    point["gain_distinguishable"] =
        verdict == fmf::GainVerdict::kHelps || verdict == fmf::GainVerdict::kHurts;
    points.push_back(point);
  }
  nlohmann::json baselines = nlohmann::json::array();
  for (size_t r = 0; r < sweep.baselines.size(); ++r) {
    nlohmann::json b = {{"seed", sweep.seeds[r]}};
    AddComparisonJson(sweep.baselines[r], b);
    b.erase("gain_captured");
    baselines.push_back(b);
  }
  return {{"sweep", points}, {"baselines", baselines}};
}

void PrintGainSweep(const GainSweep& sweep, const std::string& label) {
  std::cout << absl::StrFormat("\n%s: gain captured over %d repeat(s) (seeds %d..%d)\n", label,
                               sweep.repeats, sweep.seeds.front(), sweep.seeds.back());
  std::cout << absl::StrFormat("%-8s %10s %9s %21s %12s\n", "epsilon", "gain mean", "sd",
                               "95% interval", "test MSE");
  for (const SweepPoint& p : sweep.points) {
    const std::string interval =
        p.gain.ci95_low
            ? absl::StrFormat("[%s, %s]", Percent(p.gain.ci95_low), Percent(p.gain.ci95_high))
            : std::string("-");
    std::cout << absl::StrFormat("%-8s %10s %9s %21s %12.4f\n", EpsilonText(p.epsilon),
                                 std::isnan(p.gain.mean) ? std::string("-") : Percent(p.gain.mean),
                                 Percent(p.gain.sd), interval, p.mse_federated_mean);
  }
  for (const SweepPoint& p : sweep.points) {
    std::cout << absl::StrFormat("epsilon %s: %s\n", EpsilonText(p.epsilon),
                                 fmf::GainVerdictSentence(p.gain));
  }
  for (size_t r = 0; r < sweep.baselines.size(); ++r) {
    std::cout << absl::StrFormat("seed %d: local %.4f (%s), central %.4f\n", sweep.seeds[r],
                                 sweep.baselines[r].mse_local, sweep.baselines[r].local_kind,
                                 sweep.baselines[r].mse_central);
  }
}

plot::LineChart GainSweepChart(const GainSweep& sweep, const std::string& label) {
  double largest = 1;
  for (double e : sweep.epsilons) {
    if (std::isfinite(e)) largest = std::max(largest, e);
  }
  auto x = [&](double e) { return std::isinf(e) ? std::log2(largest) + 2 : std::log2(e); };
  plot::Series mean{label + " (mean)", {}}, low{"mean - sd", {}}, high{"mean + sd", {}};
  for (const SweepPoint& p : sweep.points) {
    mean.points.emplace_back(x(p.epsilon), 100 * p.gain.mean);
    if (p.gain.sd) {
      low.points.emplace_back(x(p.epsilon), 100 * (p.gain.mean - *p.gain.sd));
      high.points.emplace_back(x(p.epsilon), 100 * (p.gain.mean + *p.gain.sd));
    }
  }
  plot::LineChart chart{
      "gain",
      absl::StrCat("gain captured against epsilon, ", sweep.repeats, " repeat(s)"),
      absl::StrFormat("log2 epsilon (inf drawn at %g)", x(INFINITY)),
      "gain captured (%)",
      {mean}};
  if (!low.points.empty()) {
    chart.series.push_back(low);
    chart.series.push_back(high);
  }
  return chart;
}

}  // namespace fedmf::cli
