#include "common/lfl/lfl_simulator.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/data/partition.h"
#include "common/dp/rdp_accountant.h"
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
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> IdealSum(const std::vector<const std::vector<double>*>& inputs,
                                             int32_t) {
  if (inputs.empty()) return absl::InvalidArgumentError("nothing to sum");
  std::vector<double> sum(inputs[0]->size(), 0.0);
  for (const auto* x : inputs) {
    if (x->size() != sum.size()) return absl::InvalidArgumentError("inputs differ in length");
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += (*x)[k];
  }
  return sum;
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
  return *z * mf::SensitivityOneMatrix(config.device.rating_max);
}

absl::StatusOr<LflResult> SimulateLfl(const LflConfig& config, const data::Dataset& dataset,
                                      const SecureSumFn& secure_sum) {
  const auto start = std::chrono::steady_clock::now();
  if (auto s = ValidateLflConfig(config); !s.ok()) return s;
  LflResult result;
  result.config = config;
  auto sigma = CalibrateSigmaV(config, &result.noise_multiplier, &result.epsilon);
  if (!sigma.ok()) return sigma.status();
  result.sigma_v = *sigma;

  random::Csprng root = random::Csprng::FromOptionalSeed(config.seed);
  auto federation = data::PartitionLfl(dataset, {config.test_fraction, config.seed.value_or(1)});
  if (!federation.ok()) return federation.status();
  const int64_t n = static_cast<int64_t>(federation->parties.size());
  result.devices = n;
  const TwoRoundParams dp{n, config.omega, result.sigma_v};
  if (auto s = ValidateTwoRoundParams(dp); !s.ok()) return s;

  LflDeviceOptions device_options = config.device;
  device_options.dim = config.dim;
  std::vector<LflDevice> devices;
  devices.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    devices.emplace_back(std::move(federation->parties[i]), device_options, dp,
                         root.Fork(absl::StrCat("device-", i)));
  }
  random::Csprng server_rng = root.Fork("server");
  mf::Matrix v = mf::RandomEmbeddings(
      federation->num_items, config.dim,
      mf::InitScaleFor(0.7 * device_options.rating_max, config.dim), device_options.rating_max,
      server_rng);
  for (auto& d : devices) {
    if (auto s = d.Pretrain(v); !s.ok()) return s;
  }
  auto evaluate = [&](const mf::Matrix& vv) {
    std::vector<mf::ErrorMetrics> parts;
    parts.reserve(devices.size());
    for (const auto& d : devices) parts.push_back(d.EvaluateTest(vv));
    return mf::Combine(parts);
  };
  result.stage1_test = evaluate(v);

  random::Csprng dropout_rng = root.Fork("dropout");
  mf::LearningRateSchedule schedule(config.EffectiveLearningRate(), config.lr_final_ratio,
                                    config.iterations);
  for (int32_t t = 0; t < config.iterations; ++t) {
    LflIterationReport report;
    report.iteration = t;
    std::vector<std::vector<double>> inputs;
    std::vector<int64_t> u1;
    inputs.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      if (dropout_rng.Bernoulli(config.dropout_round1)) continue;  // vanished before submitting
      auto x = devices[i].Round1(v);
      if (!x.ok()) return x.status();
      inputs.push_back(std::move(*x));
      u1.push_back(i);
    }
    report.round1_survivors = static_cast<int64_t>(u1.size());
    if (report.round1_survivors < MinSurvivors(dp)) {
      // Too few for the aggregation: the server learns nothing this time.
      report.skipped = true;
      for (int64_t i : u1) devices[i].AbandonIteration();
      result.iterations.push_back(report);
      continue;
    }
    std::vector<const std::vector<double>*> ptrs;
    for (const auto& x : inputs) ptrs.push_back(&x);
    auto sum = secure_sum(ptrs, t);
    if (!sum.ok()) return sum.status();
    int64_t u2 = 0;
    for (int64_t i : u1) {
      if (dropout_rng.Bernoulli(config.dropout_round2)) {
        devices[i].AbandonIteration();
        continue;
      }
      auto bar = devices[i].Round2(report.round1_survivors);
      if (!bar.ok()) return bar.status();
      for (size_t k = 0; k < sum->size(); ++k) (*sum)[k] += (*bar)[k];
      ++u2;
    }
    report.round2_survivors = u2;
    report.remaining_noise_variance =
        RemainingVariance(dp, report.round1_survivors, report.round2_survivors);
    const double step = schedule.At(t) / static_cast<double>(report.round1_survivors);
    for (int64_t k = 0; k < v.size(); ++k) v.data()[k] -= step * (*sum)[k];
    mf::ClipEmbeddings(v, device_options.rating_max);
    result.iterations.push_back(report);
  }
  for (auto& d : devices) {
    if (auto s = d.Finish(v); !s.ok()) return s;
  }
  result.test = evaluate(v);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace fedmf::lfl
