// RDP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang
// 2019, "Renyi Differential Privacy of the Sampled Gaussian Mechanism").
//
// With mu0 = N(0, z^2), mu1 = N(1, z^2) and mu = (1-q) mu0 + q mu1, the RDP at
// order alpha is log(A_alpha) / (alpha - 1), A_alpha = E_{mu0}[(mu/mu0)^alpha].
#include "common/dp/rdp_accountant.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "common/dp/internal/log_math.h"

namespace fedmf::dp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Integer orders above this use the fractional series: the binomial expansion
// costs O(alpha) and nobody needs alpha beyond the default grid's 1024.
constexpr double kMaxIntegerExpansionOrder = 100000;

// The fractional series is cut off after this many terms; if it has not
// converged by then the order is reported as +inf (useless but safe).
constexpr int kMaxFractionalTerms = 1000;

// The parts of every series term that do not depend on z, for one q: a
// calibration evaluates the same q and orders at dozens of z, and the
// log-binomials (three lgamma calls a term) were most of its time. Stored
// as the partial sums the term expressions below begin with, so every term
// is the same double, to the bit, with or without the cache. Per thread, for
// the last q seen (a new q clears it): no lock, and one vector per order
// asked at that q (DefaultRdpOrders: 4,374 integer-order terms, 35 KB, and
// the fractional orders' terms summed so far).
struct SeriesCache {
  double q = kNaN;
  // alpha -> [i]: LogAbsBinomial(alpha, i) + i log q + (alpha - i) log(1 - q).
  std::map<double, std::vector<double>> integer;
  // alpha -> [n]: the same sum for the two halves of the fractional series,
  // (n, alpha - n) and (alpha - n, n) in the exponents of q and 1 - q.
  std::map<double, std::vector<std::pair<double, double>>> fractional;
};

SeriesCache& CacheFor(double q) {
  thread_local SeriesCache cache;
  if (!(cache.q == q)) {
    cache.q = q;
    cache.integer.clear();
    cache.fractional.clear();
  }
  return cache;
}

// Integer alpha: expanding (1 - q + q * mu1/mu0)^alpha binomially and using
// E_{mu0}[(mu1/mu0)^i] = exp((i^2 - i) / (2 z^2)) gives an exact finite sum
//   A_alpha = sum_{i=0..alpha} C(alpha,i) q^i (1-q)^(alpha-i) exp((i^2-i)/(2z^2)),
// every term positive, summed in log space.
double LogAInteger(double q, double z, int64_t alpha) {
  const double a = static_cast<double>(alpha);
  std::vector<double>& base = CacheFor(q).integer[a];
  if (base.empty()) {
    const double log_q = std::log(q);
    const double log_1mq = std::log1p(-q);
    base.reserve(static_cast<size_t>(alpha) + 1);
    for (int64_t i = 0; i <= alpha; ++i) {
      const double di = static_cast<double>(i);
      base.push_back(internal::LogAbsBinomial(a, di) + di * log_q + (a - di) * log_1mq);
    }
  }
  const double inv_2z2 = 1.0 / (2.0 * z * z);
  thread_local std::vector<double> terms;
  terms.resize(base.size());
  for (size_t i = 0; i < base.size(); ++i) {
    const double di = static_cast<double>(i);
    terms[i] = base[i] + (di * di - di) * inv_2z2;
  }
  return internal::LogSumExp(terms);
}

// Fractional alpha (Mironov-Talwar-Zhang §3.3). The binomial series of
// (1 - q + q * ratio)^alpha no longer terminates, and it only converges where
// q * ratio < 1 - q, i.e. below z0 = z^2 log(1/q - 1) + 1/2. So A_alpha is
// split into the integrals over (-inf, z0] and [z0, inf), each expanded in its
// convergent direction:
//   A = sum_i |C(alpha,i)| [ q^i (1-q)^(alpha-i) e^{(i^2-i)/(2z^2)} * erfc((i-z0)/(sqrt2 z))/2
//                         + q^(alpha-i) (1-q)^i e^{(j^2-j)/(2z^2)} * erfc((z0-j)/(sqrt2 z))/2 ],
// j = alpha - i. Taking |C| (rather than the signed coefficient) makes every
// term positive, so the sum is an upper bound on A -- the choice of
// dp_accounting's rdp_privacy_accountant, whose test values we reproduce
// (TF Privacy's older signed series gives slightly smaller numbers at small
// fractional orders). We stop once both halves' terms are decreasing and the
// larger of them is below e^-30 of the running total.
double LogAFractional(double q, double z, double alpha) {
  const double log_q = std::log(q);
  const double log_1mq = std::log1p(-q);
  const double inv_2z2 = 1.0 / (2.0 * z * z);
  const double z0 = z * z * std::log(1.0 / q - 1.0) + 0.5;
  const double sqrt2_z = std::sqrt(2.0) * z;
  const double log_half = std::log(0.5);
  std::vector<std::pair<double, double>>& base = CacheFor(q).fractional[alpha];

  double log_a0 = -kInf, log_a1 = -kInf;
  double prev_s0 = -kInf, prev_s1 = -kInf;
  for (int n = 0; n < kMaxFractionalTerms; ++n) {
    const double i = n;
    const double j = alpha - i;
    if (static_cast<size_t>(n) == base.size()) {
      const double log_coef = internal::LogAbsBinomial(alpha, i);
      base.emplace_back(log_coef + i * log_q + j * log_1mq, log_coef + j * log_q + i * log_1mq);
    }
    const double log_s0 =
        base[n].first + (i * i - i) * inv_2z2 + log_half + internal::LogErfc((i - z0) / sqrt2_z);
    const double log_s1 =
        base[n].second + (j * j - j) * inv_2z2 + log_half + internal::LogErfc((z0 - j) / sqrt2_z);
    log_a0 = internal::LogAdd(log_a0, log_s0);
    log_a1 = internal::LogAdd(log_a1, log_s1);
    const double total = internal::LogAdd(log_a0, log_a1);
    if (log_s0 < prev_s0 && log_s1 < prev_s1 && std::max(log_s0, log_s1) < total - 30) {
      return total;
    }
    prev_s0 = log_s0;
    prev_s1 = log_s1;
  }
  return kInf;
}

bool IsIntegerOrder(double alpha) {
  return alpha == std::floor(alpha) && alpha <= kMaxIntegerExpansionOrder;
}

std::vector<double> BuildDefaultOrders() {
  std::vector<double> orders;
  // Small fractional orders matter for large noise / few steps, where the
  // optimum sits between 1 and 10.
  for (int k = 5; k <= 40; ++k) orders.push_back(0.25 * k);  // 1.25 .. 10
  for (int a = 11; a <= 64; ++a) orders.push_back(a);
  for (double a : {80.0, 96.0, 128.0, 192.0, 256.0, 512.0, 1024.0}) orders.push_back(a);
  return orders;
}

}  // namespace

const std::vector<double>& DefaultRdpOrders() {
  static const std::vector<double> orders = BuildDefaultOrders();
  return orders;
}

double SubsampledGaussianRdp(double q, double noise_multiplier, double alpha) {
  // Invalid input gives NaN, which RdpToEpsilon rejects: an error must never
  // look like a (possibly small) privacy cost.
  if (!(q >= 0 && q <= 1) || !(noise_multiplier >= 0) || !(alpha > 1)) return kNaN;
  if (q == 0) return 0;
  if (std::isinf(alpha) || noise_multiplier == 0) return kInf;
  if (std::isinf(noise_multiplier)) return 0;
  if (q == 1) return alpha / (2.0 * noise_multiplier * noise_multiplier);
  const double log_a = IsIntegerOrder(alpha)
                           ? LogAInteger(q, noise_multiplier, static_cast<int64_t>(alpha))
                           : LogAFractional(q, noise_multiplier, alpha);
  return log_a / (alpha - 1);
}

namespace {

// One step's RDP at each order.
std::vector<double> StepRdp(double q, double noise_multiplier, const std::vector<double>& orders) {
  std::vector<double> rdp(orders.size());
  for (size_t k = 0; k < orders.size(); ++k) {
    rdp[k] = SubsampledGaussianRdp(q, noise_multiplier, orders[k]);
  }
  return rdp;
}

// `steps` compositions of a step with RDP `one` (at one order).
double ComposedRdp(double one, int64_t steps) {
  if (steps < 0) return kNaN;
  if (steps == 0) return 0;
  return static_cast<double>(steps) * one;
}

}  // namespace

std::vector<double> ComputeRdp(double q, double noise_multiplier, int64_t steps,
                               const std::vector<double>& orders) {
  if (steps <= 0) return std::vector<double>(orders.size(), ComposedRdp(0, steps));
  std::vector<double> rdp = StepRdp(q, noise_multiplier, orders);
  for (double& r : rdp) r = ComposedRdp(r, steps);
  return rdp;
}

RdpAccountant::RdpAccountant(std::vector<double> orders)
    : orders_(std::move(orders)), rdp_(orders_.size(), 0.0) {}

void RdpAccountant::AddSteps(double q, double noise_multiplier, int64_t steps) {
  // NaN inputs never match the memo (NaN != NaN) and give NaN curves anyway.
  if (!(q == memo_q_ && noise_multiplier == memo_noise_multiplier_)) {
    memo_step_rdp_ = StepRdp(q, noise_multiplier, orders_);
    memo_q_ = q;
    memo_noise_multiplier_ = noise_multiplier;
  }
  // RDP composes additively at each order.
  for (size_t k = 0; k < rdp_.size(); ++k) rdp_[k] += ComposedRdp(memo_step_rdp_[k], steps);
}

absl::StatusOr<EpsilonResult> RdpAccountant::GetEpsilon(double delta) const {
  return RdpToEpsilon(orders_, rdp_, delta);
}

}  // namespace fedmf::dp
