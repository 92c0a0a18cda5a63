// Renyi-DP accountant for the Poisson-subsampled Gaussian mechanism
// (Mironov, Talwar, Zhang 2019), integer and fractional orders. The RDP ->
// (epsilon, delta) conversion is common/dp/rdp_conversion.h, epsilon for a
// schedule and its inverse (calibration) common/dp/calibration.h.
#ifndef FEDMF_COMMON_DP_RDP_ACCOUNTANT_H_
#define FEDMF_COMMON_DP_RDP_ACCOUNTANT_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "common/dp/rdp_conversion.h"

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

// Accumulates heterogeneous steps (different q / z) and answers epsilon.
class RdpAccountant {
 public:
  explicit RdpAccountant(std::vector<double> orders = DefaultRdpOrders());
  // Adds ComputeRdp(q, noise_multiplier, steps, orders()), order by order.
  void AddSteps(double q, double noise_multiplier, int64_t steps);
  absl::StatusOr<EpsilonResult> GetEpsilon(double delta) const;
  const std::vector<double>& orders() const { return orders_; }
  const std::vector<double>& rdp() const { return rdp_; }

 private:
  std::vector<double> orders_;
  std::vector<double> rdp_;
  // The one-step curve of the last (q, z) added: a party's ledger adds the
  // same schedule every round (and copies of it, to test a charge), and one
  // curve costs ~0.3 ms of lgamma over the order grid. The sums are those
  // ComputeRdp gives, to the bit (steps * one-step value, order by order).
  // NaN until the first AddSteps: no (q, z), valid or not, equals it.
  double memo_q_ = std::numeric_limits<double>::quiet_NaN();
  double memo_noise_multiplier_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> memo_step_rdp_;
};

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_RDP_ACCOUNTANT_H_
