// RDP curve -> (epsilon, delta), with the improved conversion
//   eps = min_a [ RDP(a) + log1p(-1/a) - (log(delta) + log(a)) / (a - 1) ]
// (Balle et al. 2020, as dp_accounting) and the classic one for comparison.
#ifndef FEDMF_COMMON_DP_RDP_CONVERSION_H_
#define FEDMF_COMMON_DP_RDP_CONVERSION_H_

#include <vector>

#include "absl/status/statusor.h"

namespace fedmf::dp {

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

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_RDP_CONVERSION_H_
