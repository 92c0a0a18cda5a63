#include "common/data/internal/duplicates.h"

namespace fedmf::data::internal {

std::optional<Duplicate> FindFirstDuplicate(const std::vector<Rating>& ratings, size_t rows,
                                            int32_t num_users, int32_t num_items,
                                            size_t max_index_rows) {
  // start[u]: the first slot of user u's rows, grouped by user in file order.
  std::vector<uint32_t> start(static_cast<size_t>(num_users) + 1, 0);
  for (size_t r = 0; r < rows; ++r) ++start[ratings[r].user + 1];
  for (int32_t u = 0; u < num_users; ++u) start[u + 1] += start[u];
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  // seen_by[item] = last user whose group touched the item, first_row[item] =
  // that user's first row with it.
  std::vector<int32_t> seen_by(num_items, -1);
  std::vector<uint32_t> first_row(num_items, 0);
  std::vector<uint32_t> by_user;  // the rows of users [lo, hi), from slot start[lo]
  std::optional<Duplicate> best;
  for (int32_t lo = 0; lo < num_users;) {
    int32_t hi = lo + 1;
    while (hi < num_users && start[hi + 1] - start[lo] <= max_index_rows) ++hi;
    const uint32_t base = start[lo];
    by_user.resize(start[hi] - base);
    for (size_t r = 0; r < rows; ++r) {
      const int32_t u = ratings[r].user;
      if (u >= lo && u < hi) by_user[next[u]++ - base] = static_cast<uint32_t>(r);
    }
    for (int32_t u = lo; u < hi; ++u) {
      for (uint32_t k = start[u]; k < start[u + 1]; ++k) {
        const uint32_t r = by_user[k - base];
        const int32_t item = ratings[r].item;
        if (seen_by[item] != u) {
          seen_by[item] = u;
          first_row[item] = r;
        } else if (!best.has_value() || r < best->row) {
          best = Duplicate{r, first_row[item]};
        }
      }
    }
    lo = hi;
  }
  return best;
}

}  // namespace fedmf::data::internal
