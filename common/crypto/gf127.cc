#include "common/crypto/gf127.h"

#include <algorithm>

#include "absl/status/status.h"
#include "common/base/status_macros.h"

namespace fedmf::crypto::gf127 {

Elem Load(const uint8_t* in) {
  Elem a = 0;
  for (size_t i = kElemBytes; i-- > 0;) a = (a << 8) | in[i];
  return a;
}

void Store(Elem a, uint8_t* out) {
  for (size_t i = 0; i < kElemBytes; ++i) {
    out[i] = static_cast<uint8_t>(a);
    a >>= 8;
  }
}

absl::StatusOr<std::vector<Elem>> LagrangeCoefficients(std::span<const Elem> xs, Elem x) {
  if (xs.empty()) return absl::InvalidArgumentError("Lagrange: no points");
  if (!IsCanonical(x)) return absl::InvalidArgumentError("Lagrange: evaluation point not < p");
  for (Elem xi : xs) {
    if (!IsCanonical(xi)) return absl::InvalidArgumentError("Lagrange: point not < p");
  }
  std::vector<Elem> sorted(xs.begin(), xs.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return absl::InvalidArgumentError("Lagrange: duplicate x-coordinates");
  }
  std::vector<Elem> lambda(xs.size());
  for (size_t j = 0; j < xs.size(); ++j) {
    Elem num = 1, den = 1;
    for (size_t m = 0; m < xs.size(); ++m) {
      if (m == j) continue;
      num = Mul(num, Sub(x, xs[m]));
      den = Mul(den, Sub(xs[j], xs[m]));
    }
    lambda[j] = Mul(num, Inv(den));  // den != 0: the xs are distinct
  }
  return lambda;
}

absl::StatusOr<Elem> InterpolateAt(std::span<const Elem> xs, std::span<const Elem> ys, Elem x) {
  if (xs.size() != ys.size()) return absl::InvalidArgumentError("Lagrange: |xs| != |ys|");
  for (Elem y : ys) {
    if (!IsCanonical(y)) return absl::InvalidArgumentError("Lagrange: value not < p");
  }
  ASSIGN_OR_RETURN(std::vector<Elem> lambda, LagrangeCoefficients(xs, x));
  Elem acc = 0;
  for (size_t j = 0; j < xs.size(); ++j) acc = Add(acc, Mul((lambda)[j], ys[j]));
  return acc;
}

}  // namespace fedmf::crypto::gf127
