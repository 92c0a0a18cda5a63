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

// How many row indices FindFirstDuplicate holds at once by default: 8 MB.
// Unbounded, the check held 21 MB beside 5.3M loaded ratings (64 MB), and
// the allocator kept the freed block resident through the split.
inline constexpr size_t kDuplicateIndexRows = size_t{1} << 21;

// Checks ratings[0, rows). O(rows + users + items) time per pass: ratings are
// bucketed by user (stable counting sort into 4-byte row indices), then each
// user's items are stamped in a per-item array. Users are taken in ranges of
// at most `max_index_rows` rows (a user with more gets a range of its own),
// one pass over the ratings per range; the result does not depend on it.
// Indices must be in range.
std::optional<Duplicate> FindFirstDuplicate(const std::vector<Rating>& ratings, size_t rows,
                                            int32_t num_users, int32_t num_items,
                                            size_t max_index_rows = kDuplicateIndexRows);

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_DUPLICATES_H_
