// Internal: log-space arithmetic for the RDP accountant. The terms of the
// subsampled-Gaussian moment span hundreds of orders of magnitude, so every
// sum is done on logarithms.
#ifndef FEDMF_COMMON_DP_INTERNAL_LOG_MATH_H_
#define FEDMF_COMMON_DP_INTERNAL_LOG_MATH_H_

#include <vector>

namespace fedmf::dp::internal {

// log(exp(a) + exp(b)); -inf stands for 0.
double LogAdd(double a, double b);
// log(sum_i exp(terms[i])), stable for any spread of magnitudes; -inf if empty.
double LogSumExp(const std::vector<double>& terms);
// log(erfc(x)), accurate also where erfc(x) underflows (x > ~26).
double LogErfc(double x);
// log|C(n, k)| = log|Gamma(n+1) / (Gamma(k+1) Gamma(n-k+1))| for real n and
// integer k >= 0 (the generalised binomial coefficient, which is negative for
// some k when n is fractional). Thread-safe (uses lgamma_r).
double LogAbsBinomial(double n, double k);

}  // namespace fedmf::dp::internal

#endif  // FEDMF_COMMON_DP_INTERNAL_LOG_MATH_H_
