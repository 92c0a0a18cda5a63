#include "common/coupling/paper_bound.h"

#include <algorithm>
#include <cmath>

namespace fedmf::coupling {

double PaperTheoremOneDelta(const PaperBoundParams& p) {
  const double a = p.learning_rate, c = p.clip, z = p.zeta, e = p.max_error;
  const double c1 = static_cast<double>(p.max_per_item);
  const double c2 = static_cast<double>(p.max_per_user);
  // (13): |U^t| <= |U^0| + t g |V^0| + t g^2 |U^0| + ... + t g^(t-1) |.| + g^t |U^0|
  // with g = 3 alpha max|R^ - R|; |U^0| = |V^0| = init_bound, so both are
  // init_bound (1 + t sum_{k=1}^{t-1} g^k + g^t).
  const double g = 3 * a * e;
  const double t = std::max(c1, c2) * static_cast<double>(p.epochs);
  double geometric = 0, power = 1;  // sum_{k=1}^{t-1} g^k, summed until it stops moving
  for (int64_t k = 1; k < static_cast<int64_t>(t); ++k) {
    power *= g;
    if (power < 1e-300) break;
    geometric += power;
  }
  const double ut = p.init_bound * (1 + t * geometric + std::pow(g, t));
  const double vt = ut;
  const double du = std::pow(2 * a * c * (3 * c2 * e + z), 2);
  const double dv = std::pow(2 * a * c * (3 * c1 * e + z), 2);
  const double ds = std::pow(2 * a * c * (e * (c2 * ut + vt + c2 * 2 * a * c) + z), 2);
  const double dw = std::pow(2 * a * c * (e * (c1 * vt + ut + c1 * 2 * a * c) + z), 2);
  return std::max({du, dv, ds, dw});
}

}  // namespace fedmf::coupling
