// Internal: finds repeated (user, item) pairs among dense-indexed ratings.
#ifndef FEDMF_COMMON_DATA_INTERNAL_DUPLICATES_H_
#define FEDMF_COMMON_DATA_INTERNAL_DUPLICATES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/data/ratings.h"

namespace fedmf::data::internal {

struct Duplicate {
  size_t row = 0;    // the repeat: the earliest row whose pair occurred before
  size_t first = 0;  // the first row with that pair
};

// Checks ratings[0, rows). O(rows + users + items) time and 4 bytes per row
// of scratch: ratings are bucketed by user (stable counting sort), then each
// user's items are stamped in a per-item array. Indices must be in range.
std::optional<Duplicate> FindFirstDuplicate(const std::vector<Rating>& ratings, size_t rows,
                                            int32_t num_users, int32_t num_items);

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_DUPLICATES_H_
