#include "common/data/internal/dataset_builder.h"

#include <algorithm>
#include <utility>

namespace fedmf::data::internal {
namespace {

// Numeric ids below this use the flat array (at most 4 MB per axis); MovieLens
// ids are all far smaller.
constexpr int64_t kSmallIdLimit = int64_t{1} << 20;

std::vector<std::string> ToStrings(const std::vector<absl::string_view>& views) {
  std::vector<std::string> out;
  out.reserve(views.size());
  for (absl::string_view v : views) out.emplace_back(v);
  return out;
}

}  // namespace

int32_t IdIndex::Append(absl::string_view text) {
  ids_.push_back(text);
  return static_cast<int32_t>(ids_.size() - 1);
}

int32_t IdIndex::InternText(absl::string_view text) {
  auto [it, inserted] = by_text_.try_emplace(text, static_cast<int32_t>(ids_.size()));
  if (inserted) ids_.push_back(text);
  return it->second;
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
  auto [it, inserted] = by_large_number_.try_emplace(value, static_cast<int32_t>(ids_.size()));
  if (inserted) ids_.push_back(text);
  return it->second;
}

Dataset DatasetBuilder::Finish(const RatingRange& range, std::string source) && {
  Dataset d;
  d.num_users = num_users();
  d.num_items = num_items();
  d.range = range;
  d.ratings = std::move(ratings_);
  d.user_ids = ToStrings(users_.ids());
  d.item_ids = ToStrings(items_.ids());
  d.source = std::move(source);
  return d;
}

}  // namespace fedmf::data::internal
