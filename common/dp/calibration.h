// Epsilon for a fixed schedule of the Poisson-subsampled Gaussian, and its
// inverse: the noise multiplier for a target epsilon (common/dp/rdp_accountant.h
// computes the RDP curve, common/dp/rdp_conversion.h converts it).
#ifndef FEDMF_COMMON_DP_CALIBRATION_H_
#define FEDMF_COMMON_DP_CALIBRATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace fedmf::dp {

// Convenience: epsilon after `steps` steps (default orders, or the given ones).
absl::StatusOr<double> ComputeEpsilon(double q, double noise_multiplier, int64_t steps,
                                      double delta);
absl::StatusOr<double> ComputeEpsilon(double q, double noise_multiplier, int64_t steps,
                                      double delta, const std::vector<double>& orders);

// Calibration: the smallest noise multiplier z (to ~1e-6 relative; the
// bisection stops at 1e-9) such that `steps` steps at rate q give
// epsilon <= target at delta. The returned z always meets the target.
// InvalidArgument if q is not in (0, 1], steps < 1, delta not in (0, 1) or
// the target is not positive and finite; OutOfRange if no z up to
// kMaxCalibratedNoiseMultiplier reaches it.
inline constexpr double kMaxCalibratedNoiseMultiplier = 1e6;
absl::StatusOr<double> CalibrateNoiseMultiplier(double q, int64_t steps, double delta,
                                                double target_epsilon);
absl::StatusOr<double> CalibrateNoiseMultiplier(double q, int64_t steps, double delta,
                                                double target_epsilon,
                                                const std::vector<double>& orders);

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_CALIBRATION_H_
