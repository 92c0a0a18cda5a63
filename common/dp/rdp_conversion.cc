// RDP curve -> (epsilon, delta).
#include "common/dp/rdp_conversion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/dp/rdp_accountant.h"

namespace fedmf::dp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

absl::Status ValidateCurve(const std::vector<double>& orders, const std::vector<double>& rdp,
                           double delta) {
  if (!(delta > 0 && delta < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat("delta must be in (0, 1), got %g", delta));
  }
  if (orders.size() != rdp.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("RDP curve has %d orders but %d values", orders.size(), rdp.size()));
  }
  if (orders.empty()) return absl::InvalidArgumentError("RDP curve has no orders");
  for (size_t k = 0; k < orders.size(); ++k) {
    if (!(orders[k] >= 1)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("RDP order must be >= 1, got %g", orders[k]));
    }
    // NaN is how the RDP functions report invalid mechanism parameters.
    if (std::isnan(rdp[k])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "RDP at order %g is NaN (invalid sampling rate, noise multiplier or steps?)", orders[k]));
    }
  }
  return absl::OkStatus();
}

// Picks the order with the smallest epsilon; ties keep the first.
template <typename EpsAtOrder>
EpsilonResult Minimize(const std::vector<double>& orders, const std::vector<double>& rdp,
                       EpsAtOrder eps_at) {
  EpsilonResult best{kInf, orders.front()};
  for (size_t k = 0; k < orders.size(); ++k) {
    const double eps = eps_at(orders[k], rdp[k]);
    if (eps < best.epsilon) best = {eps, orders[k]};
  }
  if (best.epsilon < 0) best.epsilon = 0;
  return best;
}

}  // namespace

absl::StatusOr<EpsilonResult> RdpToEpsilon(const std::vector<double>& orders,
                                           const std::vector<double>& rdp, double delta) {
  RETURN_IF_ERROR(ValidateCurve(orders, rdp, delta));
  const double log_delta = std::log(delta);
  return Minimize(orders, rdp, [&](double a, double r) {
    // Tiny negative values are round-off in an exactly-zero RDP.
    r = std::max(r, 0.0);
    // RDP is non-decreasing in the order and tends to the KL divergence at
    // order 1, so r >= KL; the Bretagnolle-Huber bound TV <= sqrt(1 - exp(-KL)) makes
    // the mechanism (0, delta)-DP once that is below delta.
    if (delta * delta + std::expm1(-r) > 0) return 0.0;
    // Balle et al. 2020 ("Hypothesis testing interpretations and Renyi DP",
    // Prop. 12): eps = r + log1p(-1/a) - (log delta + log a) / (a - 1).
    // It is numerically unstable as a -> 1 and useless there anyway, so
    // orders <= 1.01 are skipped (as dp_accounting does).
    if (a <= 1.01) return kInf;
    return r + std::log1p(-1.0 / a) - (log_delta + std::log(a)) / (a - 1);
  });
}

absl::StatusOr<EpsilonResult> RdpToEpsilonClassic(const std::vector<double>& orders,
                                                  const std::vector<double>& rdp, double delta) {
  RETURN_IF_ERROR(ValidateCurve(orders, rdp, delta));
  const double log_delta = std::log(delta);
  // Mironov 2017, Prop. 3: eps = r - log(delta) / (a - 1).
  return Minimize(orders, rdp, [&](double a, double r) {
    if (a <= 1) return kInf;
    return std::max(r, 0.0) - log_delta / (a - 1);
  });
}

}  // namespace fedmf::dp
