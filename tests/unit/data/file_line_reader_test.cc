// Reading a ratings file through a small buffer must change nothing: the
// lines of internal::FileLineReader are LineReader's over the whole contents,
// and ParseRatingsFile gives ParseRatings' data set or error, for every chunk
// size down to one byte (lines straddling every boundary).
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/data/internal/file_io.h"
#include "common/data/internal/text_scan.h"
#include "common/data/loaders.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/data/test_files.h"

namespace fedmf::data {
namespace {

using ::fedmf::testing::IsOk;

constexpr size_t kChunkSizes[] = {1, 2, 3, 7, 64, size_t{1} << 20};

// Line endings, byte-order marks and blank lines where the rules differ:
// inside the data, at the end, spaces and "\r" only.
const std::vector<std::string>& Inputs() {
  static const auto* inputs = new std::vector<std::string>{
      "",
      "\n",
      " \n\t\n\r\n",
      "1\t10\t3\t0",
      "1\t10\t3\t0\n2\t10\t4\t0\n",
      "1\t10\t3\t0\r\n2\t10\t4\t0\r\n\r\n  \n",
      "\xEF\xBB\xBF"
      "1\t10\t3\t0\n2\t11\t4\t0\n\n\n",
      "\xEF\xBB",
      "1\t10\t3\t0\n\n2\t10\t4\t0\n",
      "1\t10\t3\t0\n  \t\n\n3\t10\t4\t0\n\n",
      "1\t10\t3\t0\n2\t10\tx\t0\n",
      "1\t10\t3\t0\n1\t10\t4\t0\n",
      "1\t10\t9\t0\n",
      std::string(300, '7') + "\t1\t2\t0\n1\t2\t3\t4\n",
  };
  return *inputs;
}

std::vector<std::pair<std::string, int64_t>> LinesInMemory(const std::string& contents) {
  std::vector<std::pair<std::string, int64_t>> out;
  internal::LineReader lines(contents);
  while (std::optional<absl::string_view> l = lines.Next()) {
    out.emplace_back(std::string(*l), lines.line_number());
  }
  return out;
}

std::vector<std::pair<std::string, int64_t>> LinesFromFile(const std::string& path, size_t chunk) {
  std::vector<std::pair<std::string, int64_t>> out;
  auto lines = internal::FileLineReader::Open(path, chunk);
  EXPECT_THAT(lines, IsOk());
  while (std::optional<absl::string_view> l = lines->Next()) {
    out.emplace_back(std::string(*l), lines->line_number());
  }
  EXPECT_THAT(lines->status(), IsOk());
  return out;
}

// Random lines of blanks, "\r", separators and digits: the corner cases
// above in many more arrangements.
std::string RandomContents(std::mt19937& rng) {
  static constexpr char kAlphabet[] = "12\t \r\n\n\n,:";
  std::uniform_int_distribution<size_t> length(0, 40), pick(0, sizeof(kAlphabet) - 2);
  std::string s = rng() % 4 == 0 ? "\xEF\xBB\xBF" : "";
  for (size_t n = length(rng); n > 0; --n) s.push_back(kAlphabet[pick(rng)]);
  return s;
}

TEST(FileLineReaderTest, GivesLineReadersLinesForEveryChunkSize) {
  const std::string dir = testing::MakeTempDir();
  std::vector<std::string> inputs = Inputs();
  std::mt19937 rng(7);
  for (int k = 0; k < 300; ++k) inputs.push_back(RandomContents(rng));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string path = testing::WriteFile(dir, "in" + std::to_string(i), inputs[i]);
    const auto expected = LinesInMemory(inputs[i]);
    for (size_t chunk : kChunkSizes) {
      EXPECT_EQ(LinesFromFile(path, chunk), expected) << "input " << i << ", chunk " << chunk;
    }
  }
}

TEST(FileLineReaderTest, EstimatesTheRemainingLinesFromTheBytesLeft) {
  std::string contents;
  for (int u = 0; u < 1000; ++u) contents += std::to_string(u) + "\t5\t3\t0\n";
  const std::string path = testing::WriteTempFile("u.data", contents);
  ASSERT_OK_AND_ASSIGN(auto lines, internal::FileLineReader::Open(path, 4096));
  ASSERT_TRUE(lines.Next().has_value());
  // Lines here are 10-12 bytes; the first chunk's mean stands for the rest.
  const size_t estimate = lines.EstimateRemainingLines();
  EXPECT_GE(estimate, 900u);
  EXPECT_LE(estimate, 1100u);
}

TEST(ParseRatingsFileTest, GivesParseRatingsResultForEveryChunkSize) {
  const std::string dir = testing::MakeTempDir();
  struct Case {
    RatingFormat format;
    std::string contents;
  };
  std::vector<Case> cases;
  for (const std::string& in : Inputs()) cases.push_back({RatingFormat::kMovieLens100K, in});
  cases.push_back({RatingFormat::kMovieLensCsv,
                   "userId,movieId,rating,timestamp\r\n1,2,3.5,9\r\n1,3,4,9\r\n\r\n"});
  cases.push_back({RatingFormat::kMovieLensCsv, "userId,movieId,rating,timestamp\n"});
  cases.push_back({RatingFormat::kMovieLensDat, "1::2::3::4\n2::2::5::4\n"});
  cases.push_back({RatingFormat::kGenericCsv, "user,item,rating\nann,x,2\nbob,x,3\nann,y,1\n"});
  cases.push_back({RatingFormat::kGenericCsv, "ann,x,2\nbob,x,3\nann,x,1\n"});
  const LoadOptions options{.range = {1, 5}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = testing::WriteFile(dir, "r" + std::to_string(i), cases[i].contents);
    const absl::StatusOr<Dataset> expected =
        ParseRatings(cases[i].contents, cases[i].format, path, options);
    for (size_t chunk : kChunkSizes) {
      SCOPED_TRACE(::testing::Message() << "case " << i << ", chunk " << chunk);
      const absl::StatusOr<Dataset> got = ParseRatingsFile(path, cases[i].format, options, chunk);
      ASSERT_EQ(got.status(), expected.status());
      if (!expected.ok()) continue;
      EXPECT_EQ(got->num_users, expected->num_users);
      EXPECT_EQ(got->num_items, expected->num_items);
      EXPECT_EQ(got->user_ids, expected->user_ids);
      EXPECT_EQ(got->item_ids, expected->item_ids);
      EXPECT_EQ(got->source, expected->source);
      ASSERT_EQ(got->ratings.size(), expected->ratings.size());
      for (size_t r = 0; r < got->ratings.size(); ++r) {
        EXPECT_EQ(got->ratings[r].user, expected->ratings[r].user);
        EXPECT_EQ(got->ratings[r].item, expected->ratings[r].item);
        EXPECT_EQ(got->ratings[r].value, expected->ratings[r].value);
      }
    }
  }
}

TEST(ParseRatingsFileTest, AMissingFileOrADirectoryIsNamed) {
  const std::string dir = testing::MakeTempDir();
  EXPECT_EQ(ParseRatingsFile(dir + "/none", RatingFormat::kGenericCsv).status().code(),
            absl::StatusCode::kNotFound);
  const absl::Status is_dir = ParseRatingsFile(dir, RatingFormat::kGenericCsv).status();
  EXPECT_EQ(is_dir.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(is_dir.message().find("is a directory"), absl::string_view::npos);
}

}  // namespace
}  // namespace fedmf::data
