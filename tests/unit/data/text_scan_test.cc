#include "common/data/internal/text_scan.h"

#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/data/internal/duplicates.h"
#include "gtest/gtest.h"

namespace fedmf::data::internal {
namespace {

std::vector<std::string> AllLines(absl::string_view text) {
  LineReader r(text);
  std::vector<std::string> out;
  while (auto line = r.Next()) out.emplace_back(*line);
  return out;
}

TEST(DataTextScanTest, LinesStripCrLfBomAndTrailingBlankLines) {
  EXPECT_EQ(AllLines("\xEF\xBB\xBF"
                     "a\r\nb\r\n\r\n  \n"),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(AllLines("a\nb"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(AllLines("").empty());
  EXPECT_TRUE(AllLines("\n\n").empty());
}

TEST(DataTextScanTest, BlankLineInTheMiddleIsReturnedWithItsNumber) {
  LineReader r("a\n\nb\n");
  ASSERT_EQ(r.Next().value(), "a");
  ASSERT_EQ(r.Next().value(), "");
  EXPECT_EQ(r.line_number(), 2);
  ASSERT_EQ(r.Next().value(), "b");
  EXPECT_EQ(r.line_number(), 3);
  EXPECT_FALSE(r.Next().has_value());
}

TEST(DataTextScanTest, SplitFieldsCountsBeyondTheLimit) {
  absl::string_view f[2];
  EXPECT_EQ(SplitFields("a::b::c", "::", f, 2), 3u);
  EXPECT_EQ(f[0], "a");
  EXPECT_EQ(f[1], "b");
  EXPECT_EQ(SplitFields("", ",", f, 2), 1u);
  EXPECT_EQ(SplitFields("x,", ",", f, 2), 2u);
  EXPECT_EQ(f[1], "");
}

TEST(DataTextScanTest, NumbersMustSpanTheWholeField) {
  EXPECT_EQ(ParseDouble("4.5").value(), 4.5);
  EXPECT_FALSE(ParseDouble("4.5x").has_value());
  EXPECT_FALSE(ParseDouble("").has_value());
  EXPECT_FALSE(ParseDouble("1e999").has_value());
  EXPECT_EQ(ParseInt64("-7").value(), -7);
  EXPECT_FALSE(ParseInt64("7.0").has_value());
  EXPECT_FALSE(ParseUint64("-1").has_value());
  EXPECT_EQ(Trim("  a b \t"), "a b");
}

TEST(DataDuplicatesTest, FindsTheEarliestRepeat) {
  const std::vector<Rating> r = {{0, 0, 1}, {1, 0, 1}, {2, 1, 1}, {1, 1, 1},
                                 {2, 1, 2}, {1, 0, 3}, {0, 0, 2}};
  auto dup = FindFirstDuplicate(r, r.size(), 3, 2);
  ASSERT_TRUE(dup.has_value());
  EXPECT_EQ(dup->row, 4u);  // repeats row 2 (user 2, item 1)
  EXPECT_EQ(dup->first, 2u);
  // Only the prefix is checked.
  EXPECT_FALSE(FindFirstDuplicate(r, 4, 3, 2).has_value());
  EXPECT_FALSE(FindFirstDuplicate({}, 0, 0, 0).has_value());
}

// Users taken in ranges of a bounded number of rows find the same repeat as
// one range and as a map of every pair's first row, on random inputs with
// and without repeats, skewed users included.
TEST(DataDuplicatesTest, RangesOfUsersFindWhatOneRangeAndAMapFind) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t users = 1 + static_cast<int32_t>(gen() % 12);
    const int32_t items = 1 + static_cast<int32_t>(gen() % 15);
    const size_t rows = gen() % 60;
    std::vector<Rating> r;
    for (size_t k = 0; k < rows; ++k) {
      // Every third trial puts half its rows on user 0 (a range of its own).
      const bool skewed = trial % 3 == 0 && gen() % 2 == 0;
      r.push_back({skewed ? 0 : static_cast<int32_t>(gen() % users),
                   static_cast<int32_t>(gen() % items), 1.0f});
    }
    std::optional<Duplicate> expected;
    std::map<std::pair<int32_t, int32_t>, size_t> first;
    for (size_t k = 0; k < rows && !expected.has_value(); ++k) {
      auto [it, fresh] = first.emplace(std::make_pair(r[k].user, r[k].item), k);
      if (!fresh) expected = Duplicate{k, it->second};
    }
    for (const size_t max_rows :
         {size_t{1}, size_t{2}, size_t{5}, size_t{17}, kDuplicateIndexRows}) {
      const std::optional<Duplicate> got = FindFirstDuplicate(r, rows, users, items, max_rows);
      ASSERT_EQ(got.has_value(), expected.has_value()) << "trial " << trial << " max " << max_rows;
      if (!got.has_value()) continue;
      EXPECT_EQ(got->row, expected->row) << "trial " << trial << " max " << max_rows;
      EXPECT_EQ(got->first, expected->first) << "trial " << trial << " max " << max_rows;
    }
  }
}

}  // namespace
}  // namespace fedmf::data::internal
