#include "common/lfl/lfl_simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/data/partition.h"
#include "common/dp/rdp_accountant.h"
#include "common/lfl/item_matrix.h"
#include "common/lfl/secagg_sum.h"
#include "common/mf/clipping.h"
#include "common/mf/sgd.h"

namespace fedmf::lfl {

absl::Status ValidateLflConfig(const LflConfig& c) {
  if (c.iterations < 1) return absl::InvalidArgumentError("iterations must be >= 1");
  if (c.dim < 1) return absl::InvalidArgumentError("dim must be >= 1");
  if (!(c.omega >= 0 && c.omega < 1)) return absl::InvalidArgumentError("omega must be in [0, 1)");
  if (!(c.epsilon > 0)) return absl::InvalidArgumentError("epsilon must be > 0 (inf = no noise)");
  if (!(c.delta > 0 && c.delta < 1)) return absl::InvalidArgumentError("delta must be in (0, 1)");
  for (double p : {c.dropout_round1, c.dropout_round2}) {
    if (!(p >= 0 && p < 1)) return absl::InvalidArgumentError("dropout must be in [0, 1)");
  }
  if (c.secagg_bits < 2 || c.secagg_bits > 64) {
    return absl::InvalidArgumentError("secagg_bits must be in [2, 64]");
  }
  return absl::OkStatus();
}

absl::StatusOr<double> CalibrateSigmaV(const LflConfig& config, double* noise_multiplier,
                                       double* epsilon) {
  if (!std::isfinite(config.epsilon)) {
    *noise_multiplier = 0;
    *epsilon = std::numeric_limits<double>::infinity();
    return 0.0;
  }
  auto z = dp::CalibrateNoiseMultiplier(1.0, config.iterations, config.delta, config.epsilon);
  if (!z.ok()) return z.status();
  auto eps = dp::ComputeEpsilon(1.0, *z, config.iterations, config.delta);
  if (!eps.ok()) return eps.status();
  *noise_multiplier = *z;
  *epsilon = *eps;
  // The 1e-9 margin absorbs MinSurvivors' ceil tolerance (it may sit a hair
  // below (1 - omega) n) so the server's view never rounds below z.
  return *z * mf::SensitivityOneMatrix(config.device.rating_max) *
         std::sqrt(ServerViewVarianceInflation(config.omega)) * (1.0 + 1e-9);
}

absl::StatusOr<LflPrivacy> CalibrateLflPrivacy(const LflConfig& config, int64_t num_devices) {
  LflPrivacy out;
  double accountant_epsilon = 0;
  absl::StatusOr<double> sigma = CalibrateSigmaV(config, &out.noise_multiplier, &accountant_epsilon);
  if (!sigma.ok()) return sigma.status();
  out.sigma_v = *sigma;
  if (out.noise_multiplier == 0) {
    out.epsilon = accountant_epsilon;  // no noise: infinite
    return out;
  }
  const TwoRoundParams dp{num_devices, config.omega, out.sigma_v};
  RETURN_IF_ERROR(ValidateTwoRoundParams(dp));
  out.server_view_noise_multiplier = std::sqrt(WorstCaseServerViewVariance(dp)) /
                                     mf::SensitivityOneMatrix(config.device.rating_max);
  if (out.server_view_noise_multiplier < out.noise_multiplier) {
    return absl::InternalError(absl::StrCat("LFL calibration: the server's view has z = ",
                                            out.server_view_noise_multiplier, " < ",
                                            out.noise_multiplier));
  }
  absl::StatusOr<double> eps = dp::ComputeEpsilon(1.0, out.server_view_noise_multiplier,
                                                  config.iterations, config.delta);
  if (!eps.ok()) return eps.status();
  out.epsilon = *eps;
  return out;
}

absl::StatusOr<LflResult> SimulateLfl(const LflConfig& config, const data::Dataset& dataset,
                                      const SecureSumFn& secure_sum) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(ValidateLflConfig(config));
  LflResult result;
  result.config = config;

  random::Csprng root = random::Csprng::FromOptionalSeed(config.seed);
  auto federation = data::PartitionLfl(dataset, {config.test_fraction, config.seed.value_or(1)});
  if (!federation.ok()) return federation.status();
  const int64_t n = static_cast<int64_t>(federation->parties.size());
  result.devices = n;
  absl::StatusOr<LflPrivacy> privacy = CalibrateLflPrivacy(config, n);
  if (!privacy.ok()) return privacy.status();
  result.sigma_v = privacy->sigma_v;
  result.noise_multiplier = privacy->noise_multiplier;
  result.server_view_noise_multiplier = privacy->server_view_noise_multiplier;
  result.epsilon = privacy->epsilon;
  const TwoRoundParams dp{n, config.omega, result.sigma_v};
  RETURN_IF_ERROR(ValidateTwoRoundParams(dp));

  LflDeviceOptions device_options = config.device;
  device_options.dim = config.dim;
  std::vector<LflDevice> devices;
  devices.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    devices.emplace_back(std::move(federation->parties[i]), device_options, dp,
                         root.Fork(absl::StrCat("device-", i)));
  }
  random::Csprng server_rng = root.Fork("server");
  mf::Matrix v = InitialItemMatrix(federation->num_items, config.dim,
                                   device_options.rating_max, server_rng);
  for (auto& d : devices) {
    RETURN_IF_ERROR(d.Pretrain(v));
  }
  auto evaluate = [&](const mf::Matrix& vv) {
    std::vector<mf::ErrorMetrics> parts;
    parts.reserve(devices.size());
    for (const auto& d : devices) parts.push_back(d.EvaluateTest(vv));
    return mf::Combine(parts);
  };
  result.stage1_test = evaluate(v);

  absl::StatusOr<LflCodecs> codecs =
      ChooseLflCodecs(dp, device_options.rating_max, config.secagg_bits);
  if (!codecs.ok()) return codecs.status();
  random::Csprng dropout_rng = root.Fork("dropout");
  mf::LearningRateSchedule schedule(config.EffectiveLearningRate(), config.lr_final_ratio,
                                    config.iterations);
  for (int32_t t = 0; t < config.iterations; ++t) {
    LflIterationReport report;
    report.iteration = t;
    // Round 1: every device is asked; where each vanishes is drawn first so
    // only those that get as far as the masked input compute one.
    SecureSumRequest r1{t, 1, MinSurvivors(dp), &codecs->round1, {}, {}};
    std::vector<std::vector<double>> inputs(n);
    r1.inputs.assign(n, nullptr);
    r1.drops.resize(n);
    for (int64_t i = 0; i < n; ++i) {
      r1.drops[i] = SampleDropPoint(dropout_rng, config.dropout_round1);
      if (!Submits(r1.drops[i])) continue;
      auto x = devices[i].Round1(v);
      if (!x.ok()) return x.status();
      inputs[i] = *std::move(x);
      r1.inputs[i] = &inputs[i];
    }
    auto agg1 = secure_sum(r1);
    if (!agg1.ok()) return agg1.status();
    result.round1_cost.Add(agg1->cost);
    if (agg1->aborted) {
      // Too few for the aggregation: the server learns nothing this time.
      report.skipped = true;
      for (auto& d : devices) d.AbandonIteration();
      result.iterations.push_back(report);
      continue;
    }
    std::vector<double> sum = std::move(agg1->sum);
    report.round1_survivors = static_cast<int64_t>(agg1->included.size());
    inputs.clear();

    // Round 2: the survivors of round 1 that are still around send their
    // replacement noise through a second aggregation.
    std::vector<int64_t> roster2;
    for (size_t k : agg1->included) {
      if (r1.drops[k] == DropPoint::kNone) roster2.push_back(static_cast<int64_t>(k));
    }
    const TwoRoundParams dp2{std::max<int64_t>(1, static_cast<int64_t>(roster2.size())),
                             config.omega, result.sigma_v};
    SecureSumRequest r2{t, 2, MinSurvivors(dp2), &codecs->round2, {}, {}};
    std::vector<std::vector<double>> replacements(roster2.size());
    r2.inputs.assign(roster2.size(), nullptr);
    r2.drops.resize(roster2.size());
    for (size_t k = 0; k < roster2.size(); ++k) {
      r2.drops[k] = SampleDropPoint(dropout_rng, config.dropout_round2);
      if (!Submits(r2.drops[k])) continue;
      auto bar = devices[roster2[k]].Round2(report.round1_survivors);
      if (!bar.ok()) return bar.status();
      replacements[k] = *std::move(bar);
      r2.inputs[k] = &replacements[k];
    }
    for (auto& d : devices) d.AbandonIteration();  // everyone else is done too
    auto agg2 = secure_sum(r2);
    if (!agg2.ok()) return agg2.status();
    result.round2_cost.Add(agg2->cost);
    if (agg2->aborted) {
      report.round2_aborted = true;
    } else {
      report.round2_survivors = static_cast<int64_t>(agg2->included.size());
      for (size_t e = 0; e < sum.size(); ++e) sum[e] += agg2->sum[e];
    }
    report.remaining_noise_variance =
        RemainingVariance(dp, report.round1_survivors, report.round2_survivors);
    const double step = schedule.At(t) / static_cast<double>(report.round1_survivors);
    StepItemMatrix(v, sum, step, device_options.rating_max);
    result.iterations.push_back(report);
  }
  for (auto& d : devices) {
    RETURN_IF_ERROR(d.Finish(v));
  }
  result.test = evaluate(v);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace fedmf::lfl
