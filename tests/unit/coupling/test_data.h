// Small rating sets for the coupling tests: a rank-2 signal plus noise on a
// fraction of a users x items grid, values in [1, 5].
#ifndef FEDMF_TESTS_UNIT_COUPLING_TEST_DATA_H_
#define FEDMF_TESTS_UNIT_COUPLING_TEST_DATA_H_

#include <cstdint>
#include <vector>

#include "common/data/ratings.h"

namespace fedmf::coupling {

std::vector<data::Rating> LowRankRatings(int32_t users, int32_t items, double density,
                                         uint64_t seed);

}  // namespace fedmf::coupling

#endif  // FEDMF_TESTS_UNIT_COUPLING_TEST_DATA_H_
