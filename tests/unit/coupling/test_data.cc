#include "tests/unit/coupling/test_data.h"

#include <algorithm>

#include "common/random/csprng.h"

namespace fedmf::coupling {

std::vector<data::Rating> LowRankRatings(int32_t users, int32_t items, double density,
                                         uint64_t seed) {
  random::Csprng rng = random::Csprng::FromSeed(seed);
  std::vector<double> a(users * 2), b(items * 2);
  for (double& x : a) x = 2 * rng.NextDouble() - 1;
  for (double& x : b) x = 2 * rng.NextDouble() - 1;
  std::vector<data::Rating> out;
  for (int32_t u = 0; u < users; ++u) {
    for (int32_t i = 0; i < items; ++i) {
      if (!rng.Bernoulli(density)) continue;
      const double signal = 3 + 1.5 * (a[2 * u] * b[2 * i] + a[2 * u + 1] * b[2 * i + 1]);
      const double value = std::clamp(signal + 0.3 * (rng.NextDouble() - 0.5), 1.0, 5.0);
      out.push_back({u, i, static_cast<float>(value)});
    }
  }
  return out;
}

}  // namespace fedmf::coupling
