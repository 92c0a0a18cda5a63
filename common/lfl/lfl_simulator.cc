#include "common/lfl/lfl_simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/data/partition.h"
#include "common/dp/calibration.h"
#include "common/dp/noise.h"
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
  if (!(c.device.validation_fraction >= 0 && c.device.validation_fraction < 1)) {
    return absl::InvalidArgumentError(
        "validation_fraction must be in [0, 1) (the share of each device's training ratings held "
        "out to choose its model; 0 holds none out)");
  }
  if (!(c.device.clip_norm >= 0 && std::isfinite(c.device.clip_norm))) {
    return absl::InvalidArgumentError("clip_norm must be finite and >= 0 (0: 2 R^{3/2})");
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
  ASSIGN_OR_RETURN(
      auto z, dp::CalibrateNoiseMultiplier(1.0, config.iterations, config.delta, config.epsilon));
  ASSIGN_OR_RETURN(auto eps, dp::ComputeEpsilon(1.0, z, config.iterations, config.delta));
  *noise_multiplier = z;
  *epsilon = eps;
  // The 1e-9 margin absorbs MinSurvivors' ceil tolerance (it may sit a hair
  // below (1 - omega) n) so the server's view never rounds below z.
  return z * config.device.GradientNormBound() *
         std::sqrt(ServerViewVarianceInflation(config.omega)) * (1.0 + 1e-9);
}

absl::StatusOr<LflPrivacy> CalibrateLflPrivacy(const LflConfig& config, int64_t num_devices) {
  LflPrivacy out;
  double accountant_epsilon = 0;
  absl::StatusOr<double> sigma =
      CalibrateSigmaV(config, &out.noise_multiplier, &accountant_epsilon);
  if (!sigma.ok()) return sigma.status();
  out.sigma_v = *sigma;
  if (out.noise_multiplier == 0) {
    out.epsilon = accountant_epsilon;  // no noise: infinite
    return out;
  }
  const TwoRoundParams dp{num_devices, config.omega, out.sigma_v};
  RETURN_IF_ERROR(ValidateTwoRoundParams(dp));
  out.server_view_noise_multiplier =
      std::sqrt(WorstCaseServerViewVariance(dp)) / config.device.GradientNormBound();
  if (out.server_view_noise_multiplier < out.noise_multiplier) {
    return absl::InternalError(absl::StrCat(
        "LFL calibration: the server's view has z = ", out.server_view_noise_multiplier, " < ",
        out.noise_multiplier));
  }
  absl::StatusOr<double> eps =
      dp::ComputeEpsilon(1.0, out.server_view_noise_multiplier, config.iterations, config.delta);
  if (!eps.ok()) return eps.status();
  out.epsilon = *eps;
  return out;
}

void AddAnalyticNoise(std::vector<double>& sum, const TwoRoundParams& dp, int64_t round1_survivors,
                      int64_t round2_survivors, random::Csprng& rng) {
  const double sd = std::sqrt(RemainingVariance(dp, round1_survivors, round2_survivors));
  if (sd > 0) dp::AddGaussian(rng, sd, sum.data(), sum.size());
}

double LflLearningRate(const LflConfig& config, double sigma_v, int64_t num_devices) {
  if (config.learning_rate > 0) return config.learning_rate;
  const double cap =
      config.device.whole_gradient ? kLflWholeMaxLearningRate : kLflPaperMaxLearningRate;
  if (!(sigma_v > 0)) return cap;
  return std::min(cap, kLflNoisePerStep * static_cast<double>(num_devices) / sigma_v);
}

namespace {

// What one Stage 2 iteration leaves the server: the decoded sum (gradients
// plus the remaining noise) and who took part.
struct IterationSum {
  std::vector<double> sum;  // empty when skipped
  int64_t round1_survivors = 0;
  int64_t round2_survivors = 0;
  bool skipped = false;
  bool round2_aborted = false;
  SecureSumCost round1_cost, round2_cost;
};

// The protocol as devices run it: each adds its own noise to the whole
// vector, both rounds go through `secure_sum`.
absl::StatusOr<IterationSum> DeviceNoiseIteration(int32_t t, std::vector<LflDevice>& devices,
                                                  const mf::Matrix& v, const TwoRoundParams& dp,
                                                  const LflConfig& config, const LflCodecs& codecs,
                                                  random::Csprng& dropout_rng,
                                                  const SecureSumFn& secure_sum) {
  const int64_t n = static_cast<int64_t>(devices.size());
  IterationSum out;
  // Round 1: every device is asked; where each vanishes is drawn first, and
  // the aggregation asks those that get as far as the masked input for it
  // when it needs it (SecureSumRequest::input), so the n inputs never all
  // exist at once. Each device draws from its own stream, so the order in
  // which they are asked does not matter.
  SecureSumRequest r1{t, 1, MinSurvivors(dp), &codecs.round1, {}, 0, {}, {}};
  r1.drops.resize(n);
  for (int64_t i = 0; i < n; ++i) r1.drops[i] = SampleDropPoint(dropout_rng, config.dropout_round1);
  r1.length = static_cast<size_t>(v.size());
  r1.input = [&devices, &v](size_t k) { return devices[k].Round1(v); };
  ASSIGN_OR_RETURN(SecureSumOutcome agg1, secure_sum(r1));
  out.round1_cost = agg1.cost;
  if (agg1.aborted) {
    // Too few for the aggregation: the server learns nothing this time.
    out.skipped = true;
    for (auto& d : devices) d.AbandonIteration();
    return out;
  }
  out.sum = std::move(agg1.sum);
  out.round1_survivors = static_cast<int64_t>(agg1.included.size());

  // Round 2: the survivors of round 1 that are still around send their
  // replacement noise through a second aggregation.
  std::vector<int64_t> roster2;
  for (size_t k : agg1.included) {
    if (r1.drops[k] == DropPoint::kNone) roster2.push_back(static_cast<int64_t>(k));
  }
  const TwoRoundParams dp2{std::max<int64_t>(1, static_cast<int64_t>(roster2.size())), config.omega,
                           dp.sigma_v};
  SecureSumRequest r2{t, 2, MinSurvivors(dp2), &codecs.round2, {}, 0, {}, roster2};
  r2.drops.resize(roster2.size());
  for (size_t k = 0; k < roster2.size(); ++k) {
    r2.drops[k] = SampleDropPoint(dropout_rng, config.dropout_round2);
  }
  r2.length = static_cast<size_t>(v.size());
  const int64_t announced = out.round1_survivors;
  r2.input = [&devices, &roster2, announced](size_t k) {
    return devices[roster2[k]].Round2(announced);
  };
  absl::StatusOr<SecureSumOutcome> agg2 = secure_sum(r2);
  for (auto& d : devices) d.AbandonIteration();  // everyone else is done too
  if (!agg2.ok()) return agg2.status();
  out.round2_cost = agg2->cost;
  if (agg2->aborted) {
    out.round2_aborted = true;
  } else {
    out.round2_survivors = static_cast<int64_t>(agg2->included.size());
    for (size_t e = 0; e < out.sum.size(); ++e) out.sum[e] += agg2->sum[e];
  }
  return out;
}

// LflConfig::analytic_noise: the same dropout draws and abort rules as
// IdealSum, noise-free gradients summed in place, and the remaining noise
// drawn once per entry.
absl::StatusOr<IterationSum> AnalyticIteration(std::vector<LflDevice>& devices, const mf::Matrix& v,
                                               const TwoRoundParams& dp, const LflConfig& config,
                                               random::Csprng& dropout_rng,
                                               random::Csprng& noise_rng) {
  const int64_t n = static_cast<int64_t>(devices.size());
  const int32_t p = static_cast<int32_t>(v.cols());
  IterationSum out;
  out.sum.assign(static_cast<size_t>(v.size()), 0.0);
  std::vector<int64_t> roster2;
  int64_t remaining1 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const DropPoint drop = SampleDropPoint(dropout_rng, config.dropout_round1);
    if (!Submits(drop)) continue;
    ++out.round1_survivors;
    if (drop == DropPoint::kNone) {
      ++remaining1;
      roster2.push_back(i);
    }
    ASSIGN_OR_RETURN(SparseGradient g, devices[i].Round1Gradient(v));
    for (size_t k = 0; k < g.items.size(); ++k) {
      double* row = out.sum.data() + static_cast<size_t>(g.items[k]) * p;
      for (int32_t c = 0; c < p; ++c) row[c] += g.rows[k * p + c];
    }
  }
  if (IdealAborts(static_cast<size_t>(n), remaining1, MinSurvivors(dp))) {
    out = IterationSum{};
    out.skipped = true;
    return out;
  }
  const TwoRoundParams dp2{std::max<int64_t>(1, static_cast<int64_t>(roster2.size())), config.omega,
                           dp.sigma_v};
  int64_t submitted2 = 0, remaining2 = 0;
  for (size_t k = 0; k < roster2.size(); ++k) {
    const DropPoint drop = SampleDropPoint(dropout_rng, config.dropout_round2);
    submitted2 += Submits(drop) ? 1 : 0;
    remaining2 += drop == DropPoint::kNone ? 1 : 0;
  }
  if (IdealAborts(roster2.size(), remaining2, MinSurvivors(dp2))) {
    out.round2_aborted = true;
  } else {
    out.round2_survivors = submitted2;
  }
  AddAnalyticNoise(out.sum, dp, out.round1_survivors, out.round2_survivors, noise_rng);
  return out;
}

}  // namespace

absl::StatusOr<LflResult> SimulateLfl(const LflConfig& config, const data::Dataset& dataset,
                                      const SecureSumFn& secure_sum, const LflProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  RETURN_IF_ERROR(ValidateLflConfig(config));
  LflResult result;
  result.config = config;

  random::Csprng root = random::Csprng::FromOptionalSeed(config.seed);
  ASSIGN_OR_RETURN(data::Federation federation,
                   data::PartitionLfl(dataset, {config.test_fraction, config.seed.value_or(1)}));
  const int64_t n = static_cast<int64_t>(federation.parties.size());
  result.devices = n;
  ASSIGN_OR_RETURN(LflPrivacy privacy, CalibrateLflPrivacy(config, n));
  result.sigma_v = privacy.sigma_v;
  result.noise_multiplier = privacy.noise_multiplier;
  result.server_view_noise_multiplier = privacy.server_view_noise_multiplier;
  result.epsilon = privacy.epsilon;
  result.learning_rate = LflLearningRate(config, result.sigma_v, n);
  const TwoRoundParams dp{n, config.omega, result.sigma_v};
  RETURN_IF_ERROR(ValidateTwoRoundParams(dp));

  LflDeviceOptions device_options = config.device;
  device_options.dim = config.dim;
  std::vector<LflDevice> devices;
  devices.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    devices.emplace_back(std::move(federation.parties[i]), device_options, dp,
                         root.Fork(absl::StrCat("device-", i)));
  }
  random::Csprng server_rng = root.Fork("server");
  auto v0 = std::make_shared<const mf::Matrix>(
      InitialItemMatrix(federation.num_items, config.dim, device_options.rating_max, server_rng));
  for (auto& d : devices) {
    RETURN_IF_ERROR(d.Pretrain(v0));
  }
  auto evaluate = [&devices] {
    std::vector<mf::ErrorMetrics> parts;
    parts.reserve(devices.size());
    for (const auto& d : devices) parts.push_back(d.EvaluateTest());
    return mf::Combine(parts);
  };
  result.stage1_test = evaluate();
  if (progress.stage1_done) progress.stage1_done(n, result.stage1_test, seconds_since(start));

  ASSIGN_OR_RETURN(LflCodecs codecs,
                   ChooseLflCodecs(dp, device_options.rating_max, config.secagg_bits,
                                   device_options.GradientNormBound()));
  random::Csprng dropout_rng = root.Fork("dropout");
  random::Csprng noise_rng = root.Fork("analytic-noise");
  mf::LearningRateSchedule schedule(result.learning_rate, config.lr_final_ratio, config.iterations);
  mf::Matrix v = *v0;
  for (int32_t t = 0; t < config.iterations; ++t) {
    const auto iteration_start = std::chrono::steady_clock::now();
    absl::StatusOr<IterationSum> it =
        config.analytic_noise
            ? AnalyticIteration(devices, v, dp, config, dropout_rng, noise_rng)
            : DeviceNoiseIteration(t, devices, v, dp, config, codecs, dropout_rng, secure_sum);
    if (!it.ok()) return it.status();
    result.round1_cost.Add(it->round1_cost);
    result.round2_cost.Add(it->round2_cost);
    LflIterationReport report;
    report.iteration = t;
    report.skipped = it->skipped;
    report.round2_aborted = it->round2_aborted;
    report.round1_survivors = it->round1_survivors;
    report.round2_survivors = it->round2_survivors;
    if (!it->skipped) {
      report.remaining_noise_variance =
          RemainingVariance(dp, report.round1_survivors, report.round2_survivors);
      const double step = schedule.At(t) / static_cast<double>(report.round1_survivors);
      StepItemMatrix(v, it->sum, step, device_options.rating_max);
    }
    report.seconds = seconds_since(iteration_start);
    if (progress.iteration_done) progress.iteration_done(report);
    result.iterations.push_back(report);
  }
  auto v_final = std::make_shared<const mf::Matrix>(std::move(v));
  for (auto& d : devices) {
    RETURN_IF_ERROR(d.Finish(v_final));
    result.kept_stage1 += d.kept_stage1() ? 1 : 0;
  }
  result.test = evaluate();
  std::vector<mf::ErrorMetrics> validation;
  for (const auto& d : devices) validation.push_back(d.EvaluateValidation());
  result.validation = mf::Combine(validation);
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace fedmf::lfl
