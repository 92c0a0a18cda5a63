#include "common/secagg/parameters.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::secagg {
namespace {

double LogChoose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// Hypergeometric(population, successes, draws): pmf(x) in log space.
double LogHyperPmf(size_t population, size_t successes, size_t draws, size_t x) {
  return LogChoose(static_cast<double>(successes), static_cast<double>(x)) +
         LogChoose(static_cast<double>(population - successes), static_cast<double>(draws - x)) -
         LogChoose(static_cast<double>(population), static_cast<double>(draws));
}

bool Feasible(size_t population, size_t successes, size_t draws, size_t x) {
  return x <= successes && x <= draws && draws - x <= population - successes;
}

// Pr[X > x], summed from the tail (1 - CDF would lose the 1e-15 tails).
double UpperTail(size_t population, size_t successes, size_t draws, size_t x) {
  double p = 0;
  for (size_t y = x + 1; y <= draws; ++y) {
    if (Feasible(population, successes, draws, y)) {
      p += std::exp(LogHyperPmf(population, successes, draws, y));
    }
  }
  return p;
}

// Pr[X < x].
double LowerTail(size_t population, size_t successes, size_t draws, size_t x) {
  double p = 0;
  for (size_t y = 0; y < x && y <= draws; ++y) {
    if (Feasible(population, successes, draws, y)) {
      p += std::exp(LogHyperPmf(population, successes, draws, y));
    }
  }
  return p;
}

absl::Status CheckRequirements(size_t n, const SecurityRequirements& req) {
  if (n < 2 || n > kMaxRosterSize) {
    return absl::InvalidArgumentError(absl::StrCat("secagg parameters: n = ", n, " out of range"));
  }
  if (!(req.dropout_rate >= 0 && req.dropout_rate < 1) ||
      !(req.corrupt_rate >= 0 && req.corrupt_rate < 1)) {
    return absl::InvalidArgumentError("secagg parameters: rates must be in [0, 1)");
  }
  if (req.security_bits < 1 || req.security_bits > 256 || req.correctness_bits < 1 ||
      req.correctness_bits > 256) {
    return absl::InvalidArgumentError("secagg parameters: security bits out of range");
  }
  return absl::OkStatus();
}

// ⌊rate·n⌋ with a nudge so that 0.3 * 1000 is 300, not 299.
size_t FloorRate(double rate, size_t n) {
  return static_cast<size_t>(std::floor(rate * static_cast<double>(n) + 1e-9));
}

}  // namespace

double LogHararyDisconnectionBound(size_t n, int degree, size_t bad) {
  const size_t k = static_cast<size_t>(degree);
  if (k > bad) return -std::numeric_limits<double>::infinity();  // cannot remove 2 runs
  if (n < k + 2) return -std::numeric_limits<double>::infinity();
  const double dn = static_cast<double>(n), dk = static_cast<double>(k),
               db = static_cast<double>(bad);
  return std::log(dn) + std::log(dn - dk - 1) - std::log(2.0) + std::lgamma(db + 1) -
         std::lgamma(db - dk + 1) + std::lgamma(dn - dk + 1) - std::lgamma(dn + 1);
}

absl::StatusOr<GraphParameters> ChooseCompleteGraphParameters(size_t n,
                                                              const SecurityRequirements& req) {
  RETURN_IF_ERROR(CheckRequirements(n, req));
  const size_t corrupt = FloorRate(req.corrupt_rate, n);
  const size_t m = n - FloorRate(req.dropout_rate, n);
  const size_t t_min =
      req.adversary == AdversaryModel::kSemiMalicious ? (n + corrupt) / 2 + 1 : corrupt + 1;
  if (m < std::max<size_t>(t_min, 2)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "secagg parameters: complete graph infeasible: t must be >= ", std::max<size_t>(t_min, 2),
        " but only ", m, " devices are guaranteed to survive"));
  }
  GraphParameters p;
  p.graph = GraphKind::kComplete;
  p.threshold = static_cast<int>(m);
  p.min_survivors = static_cast<int>(m);
  return p;
}

absl::StatusOr<GraphParameters> ChooseSecAggPlusParameters(size_t n,
                                                           const SecurityRequirements& req) {
  RETURN_IF_ERROR(CheckRequirements(n, req));
  const size_t corrupt = FloorRate(req.corrupt_rate, n);
  const size_t dropped = FloorRate(req.dropout_rate, n);
  if (corrupt + dropped >= n) {
    return absl::FailedPreconditionError("secagg parameters: no honest survivors guaranteed");
  }
  const double log_security = -(req.security_bits + 1) * std::log(2.0);
  const double per_device_security =
      std::ldexp(1.0, -(req.security_bits + 1)) / static_cast<double>(n);
  const double per_device_correctness =
      std::ldexp(1.0, -req.correctness_bits) / static_cast<double>(n);
  const size_t population = n - 1;  // a device's neighbours are drawn from the others

  for (size_t k = 2; k + 1 < n; k += 2) {
    if (LogHararyDisconnectionBound(n, static_cast<int>(k), corrupt + dropped) >= log_security) {
      continue;  // (S1)
    }
    // (S2): t1 = smallest x with Pr[A > x] <= bound.
    size_t t1 = 0;
    while (t1 < k &&
           UpperTail(population, std::min(corrupt, population), k, t1) > per_device_security) {
      ++t1;
    }
    size_t t_min = t1 + 1;
    if (req.adversary == AdversaryModel::kSemiMalicious) {
      // 2t > holders + t1 = (k + 1) + t1: the device itself holds a share
      // and always counts as "survived" (signing.h, HostCollusionBound).
      t_min = std::max(t_min, (k + 1 + t1) / 2 + 1);
    }
    t_min = std::max<size_t>(t_min, 2);
    // (C): t2 = largest x with Pr[S < x] <= bound.
    const size_t survivors = population - std::min(dropped, population);
    size_t t2 = 0;
    while (t2 + 1 <= k && LowerTail(population, survivors, k, t2 + 1) <= per_device_correctness) {
      ++t2;
    }
    if (t2 < t_min) continue;
    GraphParameters p;
    p.graph = GraphKind::kHarary;
    p.degree = static_cast<int>(k);
    p.threshold = static_cast<int>(t2);
    p.min_survivors = static_cast<int>(std::max(n - dropped, t2));
    return p;
  }
  return ChooseCompleteGraphParameters(n, req);
}

void ApplyParameters(const GraphParameters& params, SessionConfig& config) {
  config.graph = params.graph;
  config.degree = params.graph == GraphKind::kHarary ? params.degree : 0;
  config.threshold = params.threshold;
  config.min_survivors = params.min_survivors;
}

}  // namespace fedmf::secagg
