#include "tools/fedmf/lfl_train.h"

#include <cmath>
#include <iostream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "common/lfl/lfl_simulator.h"
#include "common/lfl/secagg_sum.h"
#include "common/random/csprng.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {
namespace {

// Per-phase seconds (devices' work and the server's, summed over the run)
// and bytes of one round's secure aggregations.
nlohmann::json CostJson(const lfl::SecureSumCost& c, int64_t devices) {
  const char* names[] = {"key_agreement", "sharing", "masking", "unmasking"};
  nlohmann::json client, server;
  for (size_t p = 0; p < 4; ++p) {
    client[names[p]] = c.client_seconds[p];
    server[names[p]] = c.server_seconds[p];
  }
  const double per_device = c.aggregations > 0 && devices > 0
                                ? 1.0 / (static_cast<double>(c.aggregations) * devices)
                                : 0.0;
  return {{"aggregations", c.aggregations},
          {"client_seconds", client},
          {"server_seconds", server},
          {"upload_bytes", c.upload_bytes},
          {"download_bytes", c.download_bytes},
          {"upload_bytes_per_device_per_aggregation", c.upload_bytes * per_device},
          {"download_bytes_per_device_per_aggregation", c.download_bytes * per_device}};
}

// The simulation's configuration from the flags; InvalidArgument names the flag.
absl::StatusOr<lfl::LflConfig> SimulationConfigFromFlags(const JobFlags& a,
                                                         const data::Dataset& d) {
  ASSIGN_OR_RETURN(lfl::LflConfig c, LflConfigFromFlags(a, d.range.max));
  std::vector<std::string> parts = absl::StrSplit(a.dropout, ',');
  if (parts.size() != 2 || !absl::SimpleAtod(parts[0], &c.dropout_round1) ||
      !absl::SimpleAtod(parts[1], &c.dropout_round2)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dropout '", a.dropout, "': expected P1,P2, e.g. 0.1,0.05"));
  }
  RETURN_IF_ERROR(lfl::ValidateLflConfig(c));
  c.analytic_noise = a.aggregation == "analytic";
  return c;
}

// --aggregation: the ideal sum, or SecAgg (complete graph) / SecAgg+ (Harary).
absl::StatusOr<lfl::SecureSumFn> SecureSumFromFlags(const JobFlags& a, const lfl::LflConfig& c) {
  if (a.aggregation == "ideal" || c.analytic_noise) return lfl::SecureSumFn(lfl::IdealSum);
  lfl::SecAggSumOptions o;
  o.graph = a.aggregation == "secagg" ? secagg::GraphKind::kComplete : secagg::GraphKind::kHarary;
  // k and t sized for the tolerated dropout, or the lower design dropout.
  if (a.secagg_design_dropout < 0 || a.secagg_design_dropout > c.omega) {
    return absl::InvalidArgumentError(
        absl::StrCat("--secagg-design-dropout ", a.secagg_design_dropout,
                     ": must be in (0, omega = ", c.omega, "] (0 = omega)"));
  }
  o.requirements.dropout_rate = a.secagg_design_dropout > 0 ? a.secagg_design_dropout : c.omega;
  o.num_threads = a.secagg_threads;
  o.session = a.secagg_session;
  // Fresh keys and masks per aggregation; seeded only if the run is.
  return lfl::MakeSecAggSum(o, random::Csprng::FromOptionalSeed(c.seed).Fork("secagg"));
}

nlohmann::json LflResultJson(const JobFlags& a, const lfl::LflConfig& c, const lfl::LflResult& r,
                             int64_t skipped, int64_t round2_aborted) {
  std::vector<double> iteration_seconds;
  for (const auto& it : r.iterations) iteration_seconds.push_back(it.seconds);
  return {{"setting", "lfl"},
          {"data", a.data},
          {"test_mse", r.test.mse},
          {"test_rmse", r.test.rmse},
          {"stage1_test_mse", r.stage1_test.mse},
          {"epsilon", JsonNumber(r.epsilon)},
          {"epsilon_target", JsonNumber(c.epsilon)},
          {"delta", c.delta},
          {"noise_multiplier", r.noise_multiplier},
          {"server_view_noise_multiplier", r.server_view_noise_multiplier},
          // Every device (one user) in every iteration: no amplification
          // claimed; epsilon is that of `rounds` Gaussian releases at
          // server_view_noise_multiplier (docs/privacy.md, lfl).
          {"sampling_unit", "user"},
          {"sample_rate", 1.0},
          {"steps", c.iterations},
          {"sigma_v", r.sigma_v},
          {"omega", c.omega},
          {"dropout_round1", c.dropout_round1},
          {"dropout_round2", c.dropout_round2},
          {"rounds", c.iterations},
          {"skipped", skipped},
          {"round2_aborted", round2_aborted},
          {"parties", r.devices},
          {"learning_rate", r.learning_rate},
          {"kept_stage1", r.kept_stage1},
          {"algorithm", c.device.whole_gradient ? "whole" : "paper"},
          {"clip_norm", c.device.GradientNormBound()},
          {"validation_mse",
           r.validation.count > 0 ? nlohmann::json(r.validation.mse) : nlohmann::json(nullptr)},
          {"aggregation", a.aggregation},
          {"secagg_bits", c.secagg_bits},
          {"secagg_session", a.secagg_session},
          {"secure_aggregation",
           {{"round1", CostJson(r.round1_cost, r.devices)},
            {"round2", CostJson(r.round2_cost, r.devices)}}},
          {"iteration_seconds", iteration_seconds},
          {"seconds", r.seconds}};
}

// Progress lines on stderr as the simulation goes (none with --quiet): a
// large job with real secure aggregation runs for hours.
lfl::LflProgress ProgressLines(const JobFlags& a, const lfl::LflConfig& c) {
  if (a.quiet) return {};
  lfl::LflProgress p;
  p.stage1_done = [](int64_t devices, const mf::ErrorMetrics& stage1, double seconds) {
    std::cerr << absl::StrFormat("stage 1   %d devices, test MSE %.4f  %.1f s\n", devices,
                                 stage1.mse, seconds);
  };
  p.iteration_done = [iterations = c.iterations](const lfl::LflIterationReport& it) {
    std::cerr << absl::StrFormat(
        "iteration %3d/%d  U1 %5d  U2 %5d  %7.1f s%s\n", it.iteration + 1, iterations,
        it.round1_survivors, it.round2_survivors, it.seconds,
        it.skipped ? "  skipped (too few survivors)"
                   : (it.round2_aborted ? "  round 2 aborted (round-1 noise kept)" : ""));
  };
  return p;
}

void PrintLflResult(const JobFlags& a, const lfl::LflConfig& c, const lfl::LflResult& r) {
  int64_t skipped = 0, round2_aborted = 0;
  for (const auto& it : r.iterations) {
    skipped += it.skipped ? 1 : 0;
    round2_aborted += it.round2_aborted ? 1 : 0;
  }
  if (a.json) {
    std::cout << LflResultJson(a, c, r, skipped, round2_aborted).dump() << "\n";
    return;
  }
  std::cout << absl::StrFormat(
      "lfl: %d devices, test MSE %.4f (Stage 1 alone %.4f; %d devices kept it); epsilon %s at "
      "delta %g (server's view z = %.4f, sigma_v = %.3f); lr %.4g; %d iterations, %d skipped; "
      "%s aggregation; %.1f s\n",
      r.devices, r.test.mse, r.stage1_test.mse, r.kept_stage1,
      std::isinf(r.epsilon) ? "inf" : absl::StrFormat("%.4f", r.epsilon), c.delta,
      r.server_view_noise_multiplier, r.sigma_v, r.learning_rate, c.iterations, skipped,
      a.aggregation, r.seconds);
}

}  // namespace

int RunLflTrain(const JobFlags& a) {
  auto dataset = LoadWithDeclaredRange(a, a.data);
  if (!dataset.ok()) {
    return Report("fedmf train: --data", dataset.status());
  }
  absl::StatusOr<lfl::LflConfig> c = SimulationConfigFromFlags(a, *dataset);
  absl::StatusOr<lfl::SecureSumFn> sum =
      c.ok() ? SecureSumFromFlags(a, *c) : absl::StatusOr<lfl::SecureSumFn>(c.status());
  if (!sum.ok()) {
    return Report("fedmf train", UsageError(sum.status()));
  }
  auto r = lfl::SimulateLfl(*c, *dataset, *sum, ProgressLines(a, *c));
  if (!r.ok()) {
    return Report("fedmf train", RuntimeError(r.status()));
  }
  PrintLflResult(a, *c, *r);
  return 0;
}

}  // namespace fedmf::cli
