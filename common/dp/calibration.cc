// Epsilon for a fixed schedule, and its inverse: the noise for a target epsilon.
#include "common/dp/calibration.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/dp/rdp_accountant.h"
#include "common/dp/rdp_conversion.h"

namespace fedmf::dp {
namespace {

// Bisection stops when the bracket is this narrow relative to z: well inside
// the promised 1e-6, and cheap (about 30 halvings from a factor-2 bracket).
constexpr double kRelativeTolerance = 1e-9;
constexpr int kMaxBisections = 200;
// Below this z the epsilon of any realistic schedule is astronomically large;
// a target still met there is treated as met by z -> 0.
constexpr double kMinNoiseMultiplier = 1e-6;

}  // namespace

absl::StatusOr<double> ComputeEpsilon(double q, double noise_multiplier, int64_t steps,
                                      double delta, const std::vector<double>& orders) {
  absl::StatusOr<EpsilonResult> r =
      RdpToEpsilon(orders, ComputeRdp(q, noise_multiplier, steps, orders), delta);
  if (!r.ok()) return r.status();
  return r->epsilon;
}

absl::StatusOr<double> ComputeEpsilon(double q, double noise_multiplier, int64_t steps,
                                      double delta) {
  return ComputeEpsilon(q, noise_multiplier, steps, delta, DefaultRdpOrders());
}

absl::StatusOr<double> CalibrateNoiseMultiplier(double q, int64_t steps, double delta,
                                                double target_epsilon,
                                                const std::vector<double>& orders) {
  if (!(target_epsilon > 0) || !std::isfinite(target_epsilon)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("target epsilon must be positive and finite, got %g", target_epsilon));
  }
  if (!(q > 0 && q <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("sampling rate must be in (0, 1], got %g", q));
  }
  if (steps < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("steps must be >= 1, got %d", steps));
  }
  if (!(delta > 0 && delta < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat("delta must be in (0, 1), got %g", delta));
  }
  // Epsilon is continuous and non-increasing in z (each order's RDP is), so
  // {z : eps(z) <= target} is an interval [z*, inf) and bisection finds z*.
  auto meets = [&](double z) -> absl::StatusOr<bool> {
    ASSIGN_OR_RETURN(double eps, ComputeEpsilon(q, z, steps, delta, orders));
    return eps <= target_epsilon;
  };

  // Bracket: hi meets the target, lo does not.
  double hi = 1.0;
  for (;;) {
    ASSIGN_OR_RETURN(bool ok, meets(hi));
    if (ok) break;
    hi *= 2;
    if (hi > kMaxCalibratedNoiseMultiplier) {
      return absl::OutOfRangeError(absl::StrFormat(
          "target epsilon %g at delta %g is unreachable for q=%g over %d steps: even noise "
          "multiplier %g does not meet it",
          target_epsilon, delta, q, steps, kMaxCalibratedNoiseMultiplier));
    }
  }
  double lo = hi / 2;
  for (;;) {
    if (lo < kMinNoiseMultiplier) {
      lo = 0;
      break;
    }
    ASSIGN_OR_RETURN(bool ok, meets(lo));
    if (!ok) break;
    hi = lo;
    lo /= 2;
  }

  for (int it = 0; it < kMaxBisections && hi - lo > kRelativeTolerance * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    ASSIGN_OR_RETURN(bool ok, meets(mid));
    (ok ? hi : lo) = mid;
  }
  return hi;  // always a z that meets the target
}

absl::StatusOr<double> CalibrateNoiseMultiplier(double q, int64_t steps, double delta,
                                                double target_epsilon) {
  return CalibrateNoiseMultiplier(q, steps, delta, target_epsilon, DefaultRdpOrders());
}

}  // namespace fedmf::dp
