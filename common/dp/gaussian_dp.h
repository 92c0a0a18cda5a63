// Exact (epsilon, delta) of composed Gaussian mechanisms without subsampling
// (Gaussian differential privacy, Dong, Roth and Su 2019; the analytic
// Gaussian mechanism, Balle and Wang 2018).
//
// A Gaussian mechanism with L2 sensitivity Delta and noise N(0, (z Delta)^2)
// is mu-GDP with mu = 1/z, and k of them, adaptively composed, are
// sqrt(sum_i 1/z_i^2)-GDP — exactly, not as a bound: the privacy loss of the
// composition is the loss of one Gaussian mechanism. mu-GDP holds at
// (epsilon, delta) iff
//   delta >= Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)
// (Dong et al., Corollary 2.13), the tight curve. The RDP accountant
// (rdp_accountant.h, rdp_conversion.h) bounds the same mechanisms from above:
// for one release at epsilon = 1, delta = 1e-5 it needs z = 4.045 where this
// curve needs z = 3.73. Only for releases where every record is in every
// step (no Poisson subsampling): subsampled steps stay with the RDP
// accountant.
#ifndef FEDMF_COMMON_DP_GAUSSIAN_DP_H_
#define FEDMF_COMMON_DP_GAUSSIAN_DP_H_

#include <vector>

#include "absl/status/statusor.h"

namespace fedmf::dp {

// The smallest delta at which mu-GDP gives epsilon: the formula above,
// evaluated in log space (its two terms underflow separately for large
// epsilon). mu > 0, epsilon >= 0; mu = +inf gives 1.
double GaussianDpDelta(double mu, double epsilon);

// The smallest epsilon >= 0 with GaussianDpDelta(mu, epsilon) <= delta
// (bisection to 1e-10 relative; the result always meets delta). +inf for mu =
// +inf. InvalidArgument for mu <= 0 or NaN, delta outside (0, 1).
absl::StatusOr<double> GaussianDpEpsilon(double mu, double delta);

// The largest mu whose GaussianDpEpsilon(mu, delta) <= epsilon (bisection to
// 1e-10 relative; the result always meets the target). +inf for epsilon =
// +inf. InvalidArgument for epsilon <= 0 or NaN, delta outside (0, 1).
absl::StatusOr<double> GaussianDpMu(double epsilon, double delta);

// mu of the adaptive composition of Gaussian mechanisms with noise
// multipliers z_i (sigma_i = z_i * Delta_i): sqrt(sum 1/z_i^2). A z_i of +inf
// (no release) adds nothing; z_i = 0 (no noise) gives +inf. InvalidArgument
// for a negative or NaN z_i.
absl::StatusOr<double> ComposedGaussianMu(const std::vector<double>& noise_multipliers);

// Epsilon at delta of the composition above (GaussianDpEpsilon of its mu).
absl::StatusOr<double> ComposedGaussianEpsilon(const std::vector<double>& noise_multipliers,
                                               double delta);

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_GAUSSIAN_DP_H_
