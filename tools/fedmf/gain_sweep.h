// The collaboration gain with its spread (issue #53): `fedmf train --compare
// --repeats N [--epsilon-sweep E1,E2,...]`. For each repeat r the data is
// split again with seed + r (the federated job's noise and the baselines'
// randomness follow the same seed), the --compare baselines run once on that
// split, and the federated job runs at every epsilon; the gains are then
// summarised per epsilon (fmf::SummarizeGains: mean, sd, 95% interval).
// Built for reuse: `fedmf advise --repeats` (issue #56) can call RunGainSweep
// with its own flags and read the per-epsilon summaries.
#ifndef FEDMF_TOOLS_FEDMF_GAIN_SWEEP_H_
#define FEDMF_TOOLS_FEDMF_GAIN_SWEEP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fmf/gain.h"
#include "common/plot/svg_chart.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/comparison.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

// One federated run of the sweep.
struct SweepRun {
  double epsilon = 0;  // the target (+inf: non-private)
  int32_t repeat = 0;
  uint64_t seed = 0;
  double mse_federated = 0;
  double validation_mse = 0;
  std::optional<double> gain;
  double epsilon_spent = 0;             // as the run reports it
  std::optional<double> epsilon_alone;  // algorithm stats
  std::string model_kind;               // algorithm stats: what most parties chose
};

struct SweepPoint {
  double epsilon = 0;
  fmf::GainSummary gain;
  double mse_federated_mean = 0;
  std::vector<SweepRun> runs;
};

struct GainSweep {
  std::vector<double> epsilons;
  int32_t repeats = 0;
  std::vector<uint64_t> seeds;
  std::vector<Comparison> baselines;  // per repeat
  std::vector<SweepPoint> points;     // per epsilon, in the order given
};

// Parses "1,4,16,64,256,inf" (each as --epsilon accepts it).
absl::StatusOr<std::vector<double>> ParseEpsilonList(const std::string& text);

// Runs the sweep for `flags` (its --epsilon is replaced by each of
// `epsilons`; its --seed, default 1, is the first repeat's). `on_run`, if
// given, hears of every finished run (progress).
absl::StatusOr<GainSweep> RunGainSweep(
    const JobFlags& flags, const std::vector<double>& epsilons, int32_t repeats,
    const std::function<void(const SweepRun&)>& on_run = nullptr);

// The sweep as JSON: per epsilon gain_captured (mean), gain_captured_sd,
// gain_captured_ci95 [low, high], gain_verdict ("helps", "hurts", "not
// distinguishable", "undefined": fmf::JudgeGain) and gain_distinguishable
// (the 95% interval excludes 0), the runs; and each repeat's baselines.
nlohmann::json GainSweepJson(const GainSweep& sweep);
// The table on stdout, then per epsilon whether the gain is told from zero.
void PrintGainSweep(const GainSweep& sweep, const std::string& label);
// Gain captured against epsilon (x = log2 epsilon; +inf drawn two steps
// right of the largest finite epsilon): the mean and mean -+ sd.
plot::LineChart GainSweepChart(const GainSweep& sweep, const std::string& label);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_GAIN_SWEEP_H_
