#include "common/dp/gaussian_dp.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/dp/internal/log_math.h"

namespace fedmf::dp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRelativeTolerance = 1e-10;
constexpr int kMaxBisections = 400;

// log Phi(-x) = log(erfc(x / sqrt 2) / 2), accurate where Phi underflows.
double LogNormalTail(double x) { return internal::LogErfc(x / std::sqrt(2.0)) - std::log(2.0); }

absl::Status CheckDelta(double delta) {
  if (!(delta > 0 && delta < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat("delta must be in (0, 1), got %g", delta));
  }
  return absl::OkStatus();
}

// The boundary x > 0 between {x : low_side(x)} = [0, x*) and its complement,
// for a predicate that holds below x* and fails above: doubles a bracket
// from 1, then bisects to kRelativeTolerance. Returns the end of the final
// bracket on `keep_low`'s side (the last x where low_side held, or the first
// where it failed); +inf when no bracket below 1e12 is found.
template <typename LowSide>
double Boundary(LowSide low_side, bool keep_low) {
  double lo = 0;
  double hi = 1;
  while (low_side(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > 1e12) return kInf;
  }
  for (int it = 0; it < kMaxBisections && hi - lo > kRelativeTolerance * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (low_side(mid) ? lo : hi) = mid;
  }
  return keep_low ? lo : hi;
}

}  // namespace

double GaussianDpDelta(double mu, double epsilon) {
  if (std::isinf(mu)) return 1.0;
  const double log_a = LogNormalTail(epsilon / mu - mu / 2);
  const double log_b = epsilon + LogNormalTail(epsilon / mu + mu / 2);
  if (!(log_b < log_a)) return 0.0;  // only by rounding: the difference is >= 0
  return std::exp(log_a) * -std::expm1(log_b - log_a);
}

absl::StatusOr<double> GaussianDpEpsilon(double mu, double delta) {
  RETURN_IF_ERROR(CheckDelta(delta));
  if (!(mu > 0)) {
    return absl::InvalidArgumentError(absl::StrFormat("mu must be positive, got %g", mu));
  }
  if (std::isinf(mu)) return kInf;
  if (GaussianDpDelta(mu, 0) <= delta) return 0.0;
  // delta(epsilon) decreases in epsilon: the smallest epsilon meeting delta.
  return Boundary([&](double e) { return GaussianDpDelta(mu, e) > delta; }, /*keep_low=*/false);
}

absl::StatusOr<double> GaussianDpMu(double epsilon, double delta) {
  RETURN_IF_ERROR(CheckDelta(delta));
  if (!(epsilon > 0)) {
    return absl::InvalidArgumentError(absl::StrFormat("epsilon must be positive, got %g", epsilon));
  }
  if (std::isinf(epsilon)) return kInf;
  // delta at a fixed epsilon increases in mu: the largest mu meeting delta.
  return Boundary([&](double mu) { return GaussianDpDelta(mu, epsilon) <= delta; },
                  /*keep_low=*/true);
}

absl::StatusOr<double> ComposedGaussianMu(const std::vector<double>& noise_multipliers) {
  double sum = 0;
  for (double z : noise_multipliers) {
    if (!(z >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("noise multiplier must be >= 0, got %g", z));
    }
    if (z == 0) return kInf;
    if (std::isinf(z)) continue;
    sum += 1 / (z * z);
  }
  return std::sqrt(sum);
}

absl::StatusOr<double> ComposedGaussianEpsilon(const std::vector<double>& noise_multipliers,
                                               double delta) {
  ASSIGN_OR_RETURN(double mu, ComposedGaussianMu(noise_multipliers));
  if (mu == 0) {
    RETURN_IF_ERROR(CheckDelta(delta));
    return 0.0;
  }
  return GaussianDpEpsilon(mu, delta);
}

}  // namespace fedmf::dp
