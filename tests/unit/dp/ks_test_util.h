// Test helpers: the one-sample Kolmogorov-Smirnov test and the CDFs the
// sampler tests compare against. Written here (not taken from a stats
// library) so the tests have no dependency beyond the standard library.
#ifndef FEDMF_TESTS_UNIT_DP_KS_TEST_UTIL_H_
#define FEDMF_TESTS_UNIT_DP_KS_TEST_UTIL_H_

#include <functional>
#include <vector>

namespace fedmf::dp::stats {

// D_n = sup_x |F_n(x) - F(x)| for the empirical CDF of `samples`.
double KsStatistic(std::vector<double> samples, const std::function<double(double)>& cdf);

// Asymptotic p-value P(D_n >= d) from the Kolmogorov distribution,
// Q(l) = 2 sum_{j>=1} (-1)^(j-1) exp(-2 j^2 l^2), with Stephens' (1970)
// finite-n correction l = (sqrt(n) + 0.12 + 0.11/sqrt(n)) d.
double KsPValue(double d, size_t n);

struct KsResult {
  double statistic = 0;
  double p_value = 0;
};
KsResult KsTest(std::vector<double> samples, const std::function<double(double)>& cdf);

double NormalCdf(double x, double sigma);
double LaplaceCdf(double x, double b);
double ExponentialCdf(double x, double lambda);
// Regularised lower incomplete gamma P(a, x).
double RegularizedGammaP(double a, double x);
double GammaCdf(double x, double shape, double scale);

}  // namespace fedmf::dp::stats

#endif  // FEDMF_TESTS_UNIT_DP_KS_TEST_UTIL_H_
