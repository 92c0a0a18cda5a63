#include "common/data/internal/text_scan.h"

#include <string>
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

}  // namespace
}  // namespace fedmf::data::internal
