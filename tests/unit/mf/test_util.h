// Small helpers shared by the mf unit tests (random matrices from a seeded
// Csprng; never std::mt19937).
#ifndef FEDMF_TESTS_UNIT_MF_TEST_UTIL_H_
#define FEDMF_TESTS_UNIT_MF_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/data/ratings.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::mf::testing {

// Entries uniform in [lo, hi).
inline Matrix UniformMatrix(int32_t rows, int32_t cols, double lo, double hi, random::Csprng& rng) {
  Matrix m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = lo + (hi - lo) * rng.NextDouble();
  return m;
}

// Ratings from a non-negative rank-`rank` model <a_i, b_j>, each (user, item)
// pair observed with probability `density`; values are the exact inner
// products (so a rank >= `rank` model can fit them to zero loss).
inline std::vector<data::Rating> LowRankRatings(int32_t users, int32_t items, int32_t rank,
                                                double density, random::Csprng& rng) {
  // Scale so <a,b> has mean ~3 and stays below 5 (=R) in practice.
  const double s = 2.0 * std::sqrt(3.0 / rank);
  Matrix a = UniformMatrix(users, rank, 0.0, s, rng);
  Matrix b = UniformMatrix(items, rank, 0.0, s, rng);
  std::vector<data::Rating> out;
  for (int32_t i = 0; i < users; ++i) {
    for (int32_t j = 0; j < items; ++j) {
      if (rng.NextDouble() < density) {
        out.push_back({i, j, static_cast<float>(a.row(i).dot(b.row(j)))});
      }
    }
  }
  return out;
}

}  // namespace fedmf::mf::testing

#endif  // FEDMF_TESTS_UNIT_MF_TEST_UTIL_H_
