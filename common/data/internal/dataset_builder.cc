#include "common/data/internal/dataset_builder.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace fedmf::data::internal {
namespace {

// Numeric ids below this use the flat array (at most 4 MB per axis); MovieLens
// ids are all far smaller.
constexpr int64_t kSmallIdLimit = int64_t{1} << 20;

}  // namespace

int32_t IdIndex::Append(absl::string_view text) {
  texts_.emplace_back(text);
  return static_cast<int32_t>(texts_.size() - 1);
}

int32_t IdIndex::InternText(absl::string_view text) {
  if (auto it = by_text_.find(text); it != by_text_.end()) return it->second;
  const int32_t index = Append(text);
  by_text_.emplace(texts_.back(), index);  // keyed by the index's own copy
  return index;
}

std::vector<std::string> IdIndex::TakeTexts() && {
  return std::vector<std::string>(std::make_move_iterator(texts_.begin()),
                                  std::make_move_iterator(texts_.end()));
}

int32_t IdIndex::InternNumber(int64_t value, absl::string_view text) {
  if (value >= 0 && value < kSmallIdLimit) {
    const auto slot = static_cast<size_t>(value);
    if (slot >= by_small_number_.size()) {
      by_small_number_.resize(std::max(slot + 1, 2 * by_small_number_.size()), -1);
    }
    int32_t& index = by_small_number_[slot];
    if (index < 0) index = Append(text);
    return index;
  }
  auto [it, inserted] = by_large_number_.try_emplace(value, static_cast<int32_t>(texts_.size()));
  if (inserted) Append(text);
  return it->second;
}

Dataset DatasetBuilder::Finish(const RatingRange& range, std::string source) && {
  Dataset d;
  d.num_users = num_users();
  d.num_items = num_items();
  d.range = range;
  d.ratings = std::move(ratings_);
  d.user_ids = std::move(users_).TakeTexts();
  d.item_ids = std::move(items_).TakeTexts();
  d.source = std::move(source);
  return d;
}

}  // namespace fedmf::data::internal
