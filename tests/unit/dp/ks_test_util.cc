#include "tests/unit/dp/ks_test_util.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fedmf::dp::stats {

double KsStatistic(std::vector<double> samples, const std::function<double(double)>& cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double f = cdf(samples[i]);
    // The empirical CDF jumps from i/n to (i+1)/n at the i-th order statistic.
    d = std::max({d, (static_cast<double>(i) + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return d;
}

double KsPValue(double d, size_t n) {
  const double sn = std::sqrt(static_cast<double>(n));
  const double lambda = (sn + 0.12 + 0.11 / sn) * d;
  if (lambda < 0.2) return 1.0;  // the series converges slowly here; Q is 1 to 1e-9
  double sum = 0;
  for (int j = 1; j <= 100; ++j) {
    const double term = std::exp(-2.0 * j * j * lambda * lambda);
    sum += (j % 2 == 1) ? term : -term;
    if (term < 1e-16) break;
  }
  return std::clamp(2.0 * sum, 0.0, 1.0);
}

KsResult KsTest(std::vector<double> samples, const std::function<double(double)>& cdf) {
  const size_t n = samples.size();
  KsResult r;
  r.statistic = KsStatistic(std::move(samples), cdf);
  r.p_value = KsPValue(r.statistic, n);
  return r;
}

double NormalCdf(double x, double sigma) { return 0.5 * std::erfc(-x / (sigma * std::sqrt(2.0))); }

double LaplaceCdf(double x, double b) {
  return x < 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b);
}

double ExponentialCdf(double x, double lambda) { return x <= 0 ? 0.0 : -std::expm1(-lambda * x); }

double RegularizedGammaP(double a, double x) {
  if (x <= 0) return 0;
  const double log_prefactor = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    // Series: P = e^-x x^a / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n)).
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 10000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-16) break;
    }
    return std::exp(log_prefactor) * sum;
  }
  // Continued fraction for Q = 1 - P (modified Lentz):
  //   Q = e^-x x^a / Gamma(a) * 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...))).
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / kTiny;
  double d = 1 / b;
  double h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return 1.0 - std::exp(log_prefactor) * h;
}

double GammaCdf(double x, double shape, double scale) {
  return RegularizedGammaP(shape, x / scale);
}

}  // namespace fedmf::dp::stats
