// Renyi-DP accountant for the Poisson-subsampled Gaussian mechanism
// (Mironov, Talwar, Zhang 2019), integer and fractional orders, with the
// improved RDP -> (epsilon, delta) conversion
//   eps = min_a [ RDP(a) + log1p(-1/a) - (log(delta) + log(a)) / (a - 1) ].
#ifndef FEDMF_COMMON_DP_RDP_ACCOUNTANT_H_
#define FEDMF_COMMON_DP_RDP_ACCOUNTANT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace fedmf::dp {

// The default order grid (dense fractional orders 1.25..10, integers to 64,
// then 80..1024) used when the caller does not pass one.
const std::vector<double>& DefaultRdpOrders();

// RDP of ONE step of the Poisson-subsampled Gaussian with sampling rate q in
// [0,1] and noise multiplier z > 0 (std-dev = z * sensitivity), at order
// alpha > 1. Returns +inf where it diverges (z == 0, alpha == inf). Integer
// orders use the exact binomial expansion; fractional ones dp_accounting's
// two-series bound (an upper bound; +inf if it has not converged after 1000
// terms, which happens at small fractional orders for large q). Returns NaN
// for invalid input (q outside [0,1], z < 0 or NaN, alpha <= 1 or NaN); the
// conversions below reject NaN, so an invalid step can never read as cheap.
double SubsampledGaussianRdp(double q, double noise_multiplier, double alpha);

// RDP over `steps` compositions at every order (NaN everywhere if steps < 0).
std::vector<double> ComputeRdp(double q, double noise_multiplier, int64_t steps,
                               const std::vector<double>& orders);

struct EpsilonResult {
  double epsilon = 0;
  double order = 0;  // the optimal order
};

// (eps, delta) from an RDP curve with the improved conversion. As in
// dp_accounting, orders <= 1.01 are skipped (numerically unstable), an order
// whose RDP r satisfies sqrt(1 - exp(-r)) < delta gives eps = 0 (KL bound),
// and the result is clamped at >= 0. InvalidArgument for delta outside (0,1),
// mismatched/empty vectors, an order < 1 or a NaN RDP value. If every order
// is +inf the result is ok with epsilon = +inf.
absl::StatusOr<EpsilonResult> RdpToEpsilon(const std::vector<double>& orders,
                                           const std::vector<double>& rdp, double delta);
// The classic conversion eps = min_a [ RDP(a) - log(delta)/(a-1) ] (for comparison).
absl::StatusOr<EpsilonResult> RdpToEpsilonClassic(const std::vector<double>& orders,
                                                  const std::vector<double>& rdp, double delta);

// Accumulates heterogeneous steps (different q / z) and answers epsilon.
class RdpAccountant {
 public:
  explicit RdpAccountant(std::vector<double> orders = DefaultRdpOrders());
  void AddSteps(double q, double noise_multiplier, int64_t steps);
  absl::StatusOr<EpsilonResult> GetEpsilon(double delta) const;
  const std::vector<double>& orders() const { return orders_; }
  const std::vector<double>& rdp() const { return rdp_; }

 private:
  std::vector<double> orders_;
  std::vector<double> rdp_;
};

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

#endif  // FEDMF_COMMON_DP_RDP_ACCOUNTANT_H_
