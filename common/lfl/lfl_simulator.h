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
#include "common/lfl/secure_sum.h"
#include "common/mf/metrics.h"

namespace fedmf::lfl {

struct LflConfig {
  int32_t iterations = 10;  // T (the default for LFL)
  int32_t dim = 20;
  double omega = 0.3;    // tolerated dropout fraction
  double epsilon = 1.0;  // +inf = no noise
  double delta = 1e-5;
  double learning_rate = 0;  // 0 = the noise-aware rule (LflLearningRate)
  double lr_final_ratio = 0.1;
  // Actual probability that a device vanishes during round 1 / round 2 of
  // an iteration, at a phase boundary of that round's secure aggregation
  // drawn uniformly (SampleDropPoint): 3/5 of the vanished are missing from
  // the sum, 2/5 are in it but take no further part in the iteration.
  double dropout_round1 = 0;
  double dropout_round2 = 0;
  int secagg_bits = 32;  // k of the fixed-point encoding (kDefaultLflBits)
  LflDeviceOptions device;
  double test_fraction = 0.1;
  std::optional<uint64_t> seed;
  // Simulation only: instead of every device drawing its xi_i, xi'_i over
  // the whole m x p vector, the sum holds the devices' noise-free gradients
  // plus ONE Gaussian per entry with the variance the protocol leaves
  // (RemainingVariance for that iteration's |U1|, |U2|) — the same
  // distribution as the devices' noise (up to the 10-sigma clamp, which
  // fires with probability < 1e-14 here), at O(n p) instead of O(n m p) work,
  // so quality runs reach 70,000 devices. No secure aggregation is run.
  bool analytic_noise = false;
};

// The Stage 2 learning rate: config.learning_rate when set, otherwise
// min(cap, kLflNoisePerStep * n / sigma_v). The update is
// V <- V - lr / |U1| (sum of gradients + noise of std >= sigma_v), so the
// second term caps the noise one step adds to an entry of V at about
// kLflNoisePerStep (V(0)'s entries are of order 0.4 for R = 5, p = 20): with
// few devices or much noise the step shrinks instead of V turning into
// noise. kappa = 0.15 was chosen on a synthetic proxy of ML-100K's shape
// (docs/archive/results-2026.md, LFL), never on a test set. The cap is the noise-free
// rate: the paper's 50 for one sampled rating; 5 for whole gradients, whose
// rows sum every rater (chosen on ML-100K's pooled validation split at
// epsilon = inf, a study). Only public job parameters (n, sigma_v, the
// algorithm) enter, so the rule costs no privacy and the server and the
// simulator compute the same rate.
inline constexpr double kLflPaperMaxLearningRate = 50.0;
inline constexpr double kLflWholeMaxLearningRate = 5.0;
inline constexpr double kLflNoisePerStep = 0.15;
double LflLearningRate(const LflConfig& config, double sigma_v, int64_t num_devices);

absl::Status ValidateLflConfig(const LflConfig& c);

// LflConfig::analytic_noise's draw: N(0, RemainingVariance(dp, round1_survivors,
// round2_survivors)) added to every entry of `sum`, i.e. exactly the law of
// the devices' xi_i and xi'_i left in the two rounds' sums.
void AddAnalyticNoise(std::vector<double>& sum, const TwoRoundParams& dp, int64_t round1_survivors,
                      int64_t round2_survivors, random::Csprng& rng);

struct LflIterationReport {
  int32_t iteration = 0;
  int64_t round1_survivors = 0;
  int64_t round2_survivors = 0;         // |U2|: replacements in the sum (0 if round 2 aborted)
  bool skipped = false;                 // round 1 aborted: the server learned nothing
  bool round2_aborted = false;          // round 2 aborted: all of U1's xi_i stay in
  double remaining_noise_variance = 0;  // per entry, analytic
  double seconds = 0;                   // wall time: both rounds' aggregations and the step of V
};

// Progress of a running simulation, for the caller's progress lines (a
// 70,000-device job with real SecAgg+ runs for hours). Each callback is
// optional and runs on the simulating thread, between phases.
struct LflProgress {
  // After Stage 1 (partition, devices built, pretraining): the Stage 1
  // model's test error and the seconds since the start.
  std::function<void(int64_t devices, const mf::ErrorMetrics& stage1_test, double seconds)>
      stage1_done;
  // After each Stage 2 iteration, with its report (as in LflResult::iterations).
  std::function<void(const LflIterationReport& report)> iteration_done;
};

struct LflResult {
  LflConfig config;
  double sigma_v = 0;           // the protocol's noise scale (TwoRoundParams::sigma_v)
  double noise_multiplier = 0;  // z the accountant was calibrated with
  // z of the Gaussian mechanism the server's joint view (S1, S2) is
  // equivalent to, worst case over the dropouts the protocol allows: >= z.
  double server_view_noise_multiplier = 0;
  double epsilon = 0;            // from server_view_noise_multiplier (RDP over T releases)
  double learning_rate = 0;      // LflLearningRate: what Stage 2 stepped with
  mf::ErrorMetrics stage1_test;  // Stage 1 alone (initial V, pretrained u_i)
  mf::ErrorMetrics test;         // the model each device kept after Stage 3
  // The kept models on the devices' own validation splits, pooled: for
  // studies that tune on data the operator may pool (not charged, and
  // biased low: the devices chose on it).
  mf::ErrorMetrics validation;
  int64_t kept_stage1 = 0;  // devices whose validation preferred Stage 1
  std::vector<LflIterationReport> iterations;
  int64_t devices = 0;
  double seconds = 0;
  SecureSumCost round1_cost;  // secure aggregations, summed over iterations
  SecureSumCost round2_cost;
};

// The protocol's noise scale: sigma_v = z Delta_2,v sqrt((2 - omega) /
// (1 - omega)) (1 + 1e-9), z calibrated with the RDP accountant for T
// Gaussian releases (no sampling amplification is claimed). The square root
// is ServerViewVarianceInflation: it makes the server's worst-case joint view
// at least as noisy as N(0, (z Delta)^2) for every n (two_round_dp.h), so it
// does not depend on the device count and the server and every device compute
// the same sigma_v from the job's public parameters. *epsilon is the
// accountant's epsilon at z (<= config.epsilon).
absl::StatusOr<double> CalibrateSigmaV(const LflConfig& config, double* noise_multiplier,
                                       double* epsilon);

// What a job over `num_devices` devices reports: sigma_v and z as above, the
// noise multiplier of the server's worst-case joint view
// (sqrt(WorstCaseServerViewVariance) / Delta_2,v >= z) and the epsilon of T
// such releases, which is <= config.epsilon.
struct LflPrivacy {
  double sigma_v = 0;
  double noise_multiplier = 0;
  double server_view_noise_multiplier = 0;
  double epsilon = 0;
};
absl::StatusOr<LflPrivacy> CalibrateLflPrivacy(const LflConfig& config, int64_t num_devices);

// Each iteration: round 1 over all n devices (min_survivors = (1 - omega) n,
// the skip rule); round 2 over the round-1 survivors still present, with the
// same omega (if it aborts, the update uses round 1 alone, whose noise
// variance is |U1| zeta1 sigma_v^2 >= sigma_v^2). Both rounds
// go through `secure_sum` with the codecs of ChooseLflCodecs.
absl::StatusOr<LflResult> SimulateLfl(const LflConfig& config, const data::Dataset& dataset,
                                      const SecureSumFn& secure_sum = IdealSum,
                                      const LflProgress& progress = {});

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_LFL_SIMULATOR_H_
