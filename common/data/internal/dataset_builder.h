// Internal: accumulates parsed rows into a Dataset with dense ids (0-based, in
// order of first appearance). Duplicate pairs are found afterwards by
// FindFirstDuplicate (duplicates.h), which is much cheaper than a hash set
// probe per row on MovieLens 10M.
#ifndef FEDMF_COMMON_DATA_INTERNAL_DATASET_BUILDER_H_
#define FEDMF_COMMON_DATA_INTERNAL_DATASET_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "common/data/ratings.h"

namespace fedmf::data::internal {

// Maps original ids to dense indices. Text ids compare as strings; numeric
// ids (MovieLens) compare as integers, through a flat array for the usual
// small values so the hot path does no hashing.
class IdIndex {
 public:
  int32_t InternText(absl::string_view text);
  int32_t InternNumber(int64_t value, absl::string_view text);

  // The text of each dense id as first seen, in id order (the index's own
  // copies: the parsed text may be a reused buffer).
  const std::deque<std::string>& ids() const { return texts_; }
  // The texts themselves, in id order; the index is spent.
  std::vector<std::string> TakeTexts() &&;

 private:
  int32_t Append(absl::string_view text);

  std::deque<std::string> texts_;  // stable addresses: by_text_'s keys view into them
  absl::flat_hash_map<absl::string_view, int32_t> by_text_;
  std::vector<int32_t> by_small_number_;  // -1 = unseen
  absl::flat_hash_map<int64_t, int32_t> by_large_number_;
};

class DatasetBuilder {
 public:
  // Ids are copied at their first appearance, so the text passed in need
  // only live for the call (a file is read through one reused buffer).
  explicit DatasetBuilder(size_t expected_rows) { ratings_.reserve(expected_rows); }

  IdIndex& users() { return users_; }
  IdIndex& items() { return items_; }
  void Add(int32_t user, int32_t item, float value) {
    ratings_.push_back(Rating{user, item, value});
  }

  const std::vector<Rating>& ratings() const { return ratings_; }
  int32_t num_users() const { return static_cast<int32_t>(users_.ids().size()); }
  int32_t num_items() const { return static_cast<int32_t>(items_.ids().size()); }

  Dataset Finish(const RatingRange& range, std::string source) &&;

 private:
  IdIndex users_;
  IdIndex items_;
  std::vector<Rating> ratings_;
};

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_DATASET_BUILDER_H_
