// LFL-SGDMF end to end in one process: n devices (one user each), the
// server's Stage 2 iterations with the two-round DP protocol over a secure
// aggregation, Stage 1 and Stage 3 on the devices.
#ifndef FEDMF_COMMON_LFL_LFL_SIMULATOR_H_
#define FEDMF_COMMON_LFL_LFL_SIMULATOR_H_

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/lfl/lfl_device.h"
#include "common/mf/metrics.h"

namespace fedmf::lfl {

struct LflConfig {
  int32_t iterations = 10;      // T (the default for LFL)
  int32_t dim = 20;
  double omega = 0.3;           // tolerated dropout fraction
  double epsilon = 1.0;         // +inf = no noise
  double delta = 1e-5;
  double learning_rate = 0;     // 0 = default (see EffectiveLearningRate)
  double lr_final_ratio = 0.1;
  double dropout_round1 = 0;    // actual probability a device vanishes in round 1
  double dropout_round2 = 0;    // ... and in round 2
  LflDeviceOptions device;
  double test_fraction = 0.1;
  std::optional<uint64_t> seed;
  double EffectiveLearningRate() const { return learning_rate > 0 ? learning_rate : 50.0; }
};

absl::Status ValidateLflConfig(const LflConfig& c);

// Sums the round-1 inputs of the survivors. The production one runs the
// secure aggregation protocol over fixed-point encodings; IdealSum is the
// plaintext reference used in tests.
using SecureSumFn = std::function<absl::StatusOr<std::vector<double>>(
    const std::vector<const std::vector<double>*>& inputs, int32_t iteration)>;
absl::StatusOr<std::vector<double>> IdealSum(const std::vector<const std::vector<double>*>& inputs,
                                             int32_t iteration);

struct LflIterationReport {
  int32_t iteration = 0;
  int64_t round1_survivors = 0;
  int64_t round2_survivors = 0;
  bool skipped = false;
  double remaining_noise_variance = 0;  // per entry, analytic
};

struct LflResult {
  LflConfig config;
  double sigma_v = 0;            // per-entry std-dev the aggregate is guaranteed
  double noise_multiplier = 0;   // z = sigma_v / Delta_2,v
  double epsilon = 0;            // epsilon reached (RDP over T releases)
  mf::ErrorMetrics stage1_test;  // Stage 1 alone (initial V, pretrained u_i)
  mf::ErrorMetrics test;         // after Stage 2 and Stage 3
  std::vector<LflIterationReport> iterations;
  int64_t devices = 0;
  double seconds = 0;
};

// The noise each iteration's aggregate must carry: sigma_v = z * Delta_2,v,
// z calibrated with the RDP accountant for T Gaussian releases (no sampling
// amplification is claimed).
absl::StatusOr<double> CalibrateSigmaV(const LflConfig& config, double* noise_multiplier,
                                       double* epsilon);

absl::StatusOr<LflResult> SimulateLfl(const LflConfig& config, const data::Dataset& dataset,
                                      const SecureSumFn& secure_sum = IdealSum);

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_LFL_SIMULATOR_H_
