#include "common/data/internal/duplicates.h"

namespace fedmf::data::internal {

std::optional<Duplicate> FindFirstDuplicate(const std::vector<Rating>& ratings, size_t rows,
                                            int32_t num_users, int32_t num_items) {
  // Rows grouped by user, each group in file order.
  std::vector<uint32_t> start(static_cast<size_t>(num_users) + 1, 0);
  for (size_t r = 0; r < rows; ++r) ++start[ratings[r].user + 1];
  for (int32_t u = 0; u < num_users; ++u) start[u + 1] += start[u];
  std::vector<uint32_t> by_user(rows);
  {
    std::vector<uint32_t> next(start.begin(), start.end() - 1);
    for (size_t r = 0; r < rows; ++r) by_user[next[ratings[r].user]++] = static_cast<uint32_t>(r);
  }
  // seen_by[item] = last user whose group touched the item, first_row[item] =
  // that user's first row with it.
  std::vector<int32_t> seen_by(num_items, -1);
  std::vector<uint32_t> first_row(num_items, 0);
  std::optional<Duplicate> best;
  for (int32_t u = 0; u < num_users; ++u) {
    for (uint32_t k = start[u]; k < start[u + 1]; ++k) {
      const uint32_t r = by_user[k];
      const int32_t item = ratings[r].item;
      if (seen_by[item] != u) {
        seen_by[item] = u;
        first_row[item] = r;
      } else if (!best.has_value() || r < best->row) {
        best = Duplicate{r, first_row[item]};
      }
    }
  }
  return best;
}

}  // namespace fedmf::data::internal
