// The Rényi orders Opacus's accountant uses by default (DEFAULT_ALPHAS:
// [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))), so that our
// epsilons can be compared with the numbers Opacus prints.
#ifndef FEDMF_TESTS_UNIT_DP_OPACUS_ORDERS_H_
#define FEDMF_TESTS_UNIT_DP_OPACUS_ORDERS_H_

#include <vector>

namespace fedmf::testing {

inline std::vector<double> OpacusOrders() {
  std::vector<double> o;
  for (int x = 1; x < 100; ++x) o.push_back(1 + x / 10.0);
  for (int a = 12; a < 64; ++a) o.push_back(a);
  return o;
}

}  // namespace fedmf::testing

#endif  // FEDMF_TESTS_UNIT_DP_OPACUS_ORDERS_H_
