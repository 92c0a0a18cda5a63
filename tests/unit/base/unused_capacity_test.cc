#include "common/base/unused_capacity.h"

#include <unistd.h>

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace fedmf::base {
namespace {

struct Rating {
  int32_t user, item;
  float value;
};

// The whole pages past size() go back; what size() covers is untouched, and
// the vector still grows into its capacity.
TEST(ReleaseUnusedCapacityTest, GivesBackTheTailsWholePagesAndKeepsTheElements) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<Rating> v(1 << 20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = {int32_t(i), int32_t(i * 7), float(i % 5)};
  v.resize(v.size() / 2);
  const auto begin = reinterpret_cast<uintptr_t>(v.data() + v.size());
  const auto end = reinterpret_cast<uintptr_t>(v.data() + v.capacity());
  const size_t expected = end / page * page - (begin + page - 1) / page * page;
  ASSERT_GT(expected, 0u);
  EXPECT_EQ(ReleaseUnusedCapacity(v), expected);
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i].user, int32_t(i));
    ASSERT_EQ(v[i].item, int32_t(i * 7));
    ASSERT_EQ(v[i].value, float(i % 5));
  }
  const Rating* storage = v.data();
  v.push_back({-1, -2, 3.5f});  // within capacity: no reallocation
  EXPECT_EQ(v.data(), storage);
  EXPECT_EQ(v.back().item, -2);
}

TEST(ReleaseUnusedCapacityTest, NothingToGiveBack) {
  std::vector<Rating> empty;
  EXPECT_EQ(ReleaseUnusedCapacity(empty), 0u);
  std::vector<Rating> full(1000);
  full.shrink_to_fit();
  EXPECT_EQ(ReleaseUnusedCapacity(full), 0u);
}

}  // namespace
}  // namespace fedmf::base
