// Core rating types shared by every layer above common/data.
#ifndef FEDMF_COMMON_DATA_RATINGS_H_
#define FEDMF_COMMON_DATA_RATINGS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace fedmf::data {

// One observed rating with dense (0-based) indices.
struct Rating {
  int32_t user = 0;
  int32_t item = 0;
  float value = 0.0f;
  friend bool operator==(const Rating&, const Rating&) = default;
};

// The declared range of rating values, e.g. [1, 5] for MovieLens 100K.
// R in the FMF paper is `max` (ratings live in [0, R]).
struct RatingRange {
  double min = 1.0;
  double max = 5.0;
};

// A whole rating matrix with dense ids. `user_ids[u]` / `item_ids[i]` are the
// original ids as written in the source file (kept for reporting and joins).
struct Dataset {
  int32_t num_users = 0;
  int32_t num_items = 0;
  RatingRange range;
  std::vector<Rating> ratings;
  std::vector<std::string> user_ids;
  std::vector<std::string> item_ids;
  std::string source;  // human-readable origin, e.g. "movielens:/path/u.data"
  // Read from a file: its path, and the line of ratings[0]; ratings keep the
  // file's row order and data lines are contiguous, so ratings[r] is on line
  // first_data_line + r. 0 = not read from a file (synthetic data).
  std::string file;
  int64_t first_data_line = 0;
};

// "<file>:<line>" of d.ratings[row], or "<source>, rating <row + 1>" when
// the data set was not read from a file.
inline std::string RatingLocation(const Dataset& d, size_t row) {
  if (d.first_data_line > 0) {
    return d.file + ":" + std::to_string(d.first_data_line + static_cast<int64_t>(row));
  }
  return d.source + ", rating " + std::to_string(row + 1);
}

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_RATINGS_H_
