// A party's map from its local row indices to global ids (PartyData's
// global_users / global_items).
#ifndef FEDMF_COMMON_DATA_INDEX_MAP_H_
#define FEDMF_COMMON_DATA_INDEX_MAP_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace fedmf::data {

// Local index l -> global id (*this)[l]. A map that is the identity 0, 1, …,
// n−1 (HFL's items, VFL's users, every LFL device's catalogue) stores no array:
// 70,000 LFL devices over 10,000 items held 2.8 GB of identical catalogues.
// Any other map is an explicit array. Which of the two is hidden: a map built
// by push_back(0), push_back(1), … or from the vector {0, 1, …} is the identity.
class IndexMap {
 public:
  // Iterates the ids by value (an identity has none to refer to).
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = int32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = int32_t;

    const_iterator() = default;
    int32_t operator*() const { return (*map_)[pos_]; }
    const_iterator& operator++() {
      ++pos_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++pos_;
      return before;
    }
    difference_type operator-(const const_iterator& other) const {
      return static_cast<difference_type>(pos_) - static_cast<difference_type>(other.pos_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.pos_ == b.pos_;
    }

   private:
    friend class IndexMap;
    const_iterator(const IndexMap* map, size_t pos) : map_(map), pos_(pos) {}
    const IndexMap* map_ = nullptr;
    size_t pos_ = 0;
  };
  using iterator = const_iterator;
  using value_type = int32_t;
  using size_type = size_t;

  IndexMap() = default;  // the empty map
  // Implicit, so that a PartyData field can be assigned a list of ids.
  IndexMap(std::vector<int32_t> ids);  // NOLINT(google-explicit-constructor)
  IndexMap(std::initializer_list<int32_t> ids) : IndexMap(std::vector<int32_t>(ids)) {}
  static IndexMap Identity(int32_t size);

  size_t size() const { return identity_ ? static_cast<size_t>(identity_size_) : ids_.size(); }
  bool empty() const { return size() == 0; }
  bool is_identity() const { return identity_; }
  // `local` < size(); not checked (callers validate their indices first).
  int32_t operator[](size_t local) const {
    return identity_ ? static_cast<int32_t>(local) : ids_[local];
  }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

  void push_back(int32_t id);
  void clear() { *this = IndexMap(); }
  std::vector<int32_t> ToVector() const;

  // Equal ids in equal order, however stored.
  friend bool operator==(const IndexMap& a, const IndexMap& b);

 private:
  bool identity_ = true;
  int32_t identity_size_ = 0;  // the size while identity_
  std::vector<int32_t> ids_;   // the ids once not identity_; empty while identity_
};

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_INDEX_MAP_H_
