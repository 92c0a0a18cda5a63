#include "common/data/index_map.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace fedmf::data {

IndexMap::IndexMap(std::vector<int32_t> ids) {
  bool identity = true;
  for (size_t l = 0; l < ids.size() && identity; ++l) identity = ids[l] == static_cast<int32_t>(l);
  if (identity) {
    identity_size_ = static_cast<int32_t>(ids.size());
  } else {
    identity_ = false;
    ids_ = std::move(ids);
  }
}

IndexMap IndexMap::Identity(int32_t size) {
  IndexMap map;
  map.identity_size_ = std::max<int32_t>(size, 0);
  return map;
}

void IndexMap::push_back(int32_t id) {
  if (identity_ && id == identity_size_) {
    ++identity_size_;
    return;
  }
  if (identity_) {
    ids_ = ToVector();
    identity_ = false;
    identity_size_ = 0;
  }
  ids_.push_back(id);
}

std::vector<int32_t> IndexMap::ToVector() const {
  if (!identity_) return ids_;
  std::vector<int32_t> ids(static_cast<size_t>(identity_size_));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

bool operator==(const IndexMap& a, const IndexMap& b) {
  if (a.size() != b.size()) return false;
  if (a.identity_ && b.identity_) return true;
  for (size_t l = 0; l < a.size(); ++l) {
    if (a[l] != b[l]) return false;
  }
  return true;
}

}  // namespace fedmf::data
