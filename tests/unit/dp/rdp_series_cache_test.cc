// The accountant keeps the z-independent parts of its series per q (a
// calibration evaluates one q at many z). Caching must not move a single
// bit: every RDP value equals the series summed term by term from scratch,
// whatever order q, z and the orders come in (a new q clears the cache).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/dp/internal/log_math.h"
#include "common/dp/rdp_accountant.h"
#include "gtest/gtest.h"

namespace fedmf::dp {
namespace {

// The series of rdp_accountant.cc written out without any cache, term for
// term in the same order of operations.
double UncachedLogAInteger(double q, double z, int64_t alpha) {
  const double log_q = std::log(q);
  const double log_1mq = std::log1p(-q);
  const double inv_2z2 = 1.0 / (2.0 * z * z);
  std::vector<double> terms;
  for (int64_t i = 0; i <= alpha; ++i) {
    const double di = static_cast<double>(i);
    const double a = static_cast<double>(alpha);
    terms.push_back(internal::LogAbsBinomial(a, di) + di * log_q + (a - di) * log_1mq +
                    (di * di - di) * inv_2z2);
  }
  return internal::LogSumExp(terms);
}

double UncachedLogAFractional(double q, double z, double alpha) {
  const double inf = std::numeric_limits<double>::infinity();
  const double log_q = std::log(q);
  const double log_1mq = std::log1p(-q);
  const double inv_2z2 = 1.0 / (2.0 * z * z);
  const double z0 = z * z * std::log(1.0 / q - 1.0) + 0.5;
  const double sqrt2_z = std::sqrt(2.0) * z;
  const double log_half = std::log(0.5);
  double log_a0 = -inf, log_a1 = -inf, prev_s0 = -inf, prev_s1 = -inf;
  for (int n = 0; n < 1000; ++n) {
    const double i = n;
    const double j = alpha - i;
    const double log_coef = internal::LogAbsBinomial(alpha, i);
    const double log_s0 = log_coef + i * log_q + j * log_1mq + (i * i - i) * inv_2z2 + log_half +
                          internal::LogErfc((i - z0) / sqrt2_z);
    const double log_s1 = log_coef + j * log_q + i * log_1mq + (j * j - j) * inv_2z2 + log_half +
                          internal::LogErfc((z0 - j) / sqrt2_z);
    log_a0 = internal::LogAdd(log_a0, log_s0);
    log_a1 = internal::LogAdd(log_a1, log_s1);
    const double total = internal::LogAdd(log_a0, log_a1);
    if (log_s0 < prev_s0 && log_s1 < prev_s1 && std::max(log_s0, log_s1) < total - 30) {
      return total;
    }
    prev_s0 = log_s0;
    prev_s1 = log_s1;
  }
  return inf;
}

double UncachedRdp(double q, double z, double alpha) {
  const double log_a = alpha == std::floor(alpha)
                           ? UncachedLogAInteger(q, z, static_cast<int64_t>(alpha))
                           : UncachedLogAFractional(q, z, alpha);
  return log_a / (alpha - 1);
}

TEST(RdpSeriesCacheTest, EveryValueIsTheUncachedSeriesToTheBit) {
  const std::vector<double>& orders = DefaultRdpOrders();
  // q changes between passes and back (clearing and refilling the cache);
  // z changes within a pass (reusing it), up and down.
  const double qs[] = {0.01, 0.001, 0.01, 0.2, 0.5, 0.01};
  const double zs[] = {0.7, 1.54, 0.9, 3.0, 1.1, 8.0};
  int checked = 0;
  for (double q : qs) {
    for (double z : zs) {
      for (double alpha : orders) {
        const double want = UncachedRdp(q, z, alpha);
        const double got = SubsampledGaussianRdp(q, z, alpha);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << q << " " << z << " " << alpha;
        } else {
          EXPECT_EQ(got, want) << "q " << q << " z " << z << " alpha " << alpha;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 6 * 6 * static_cast<int>(orders.size()));
}

}  // namespace
}  // namespace fedmf::dp
