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
  const size_t k = xs.size();
  // num[j] = prod_{m != j} (x - x_m) from prefix and suffix products: O(k).
  std::vector<Elem> num(k), den(k, 1);
  Elem before = 1;
  for (size_t j = 0; j < k; ++j) {
    num[j] = before;
    before = Mul(before, Sub(x, xs[j]));
  }
  Elem after = 1;
  for (size_t j = k; j-- > 0;) {
    num[j] = Mul(num[j], after);
    after = Mul(after, Sub(x, xs[j]));
  }
  for (size_t j = 0; j < k; ++j) {
    for (size_t m = 0; m < k; ++m) {
      if (m != j) den[j] = Mul(den[j], Sub(xs[j], xs[m]));
    }
  }
  // One inversion for all k denominators (Montgomery's trick): an inversion
  // is ~250 multiplications, and servers interpolate thousands of secrets
  // per aggregation. prefix[j] = den[0] * ... * den[j - 1].
  std::vector<Elem> prefix(k);
  Elem running = 1;
  for (size_t j = 0; j < k; ++j) {
    prefix[j] = running;
    running = Mul(running, den[j]);
  }
  Elem inv = Inv(running);  // running != 0: the xs are distinct
  std::vector<Elem> lambda(k);
  for (size_t j = k; j-- > 0;) {
    // inv = (den[0] * ... * den[j])^-1 here.
    lambda[j] = Mul(num[j], Mul(inv, prefix[j]));
    inv = Mul(inv, den[j]);
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
