// Round trips of every supported format, dense id remapping and format
// detection. Errors are in loader_errors_test.cc.
#include "common/data/loaders.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/data/test_files.h"

using ::fedmf::testing::IsOk;

namespace fedmf::data {
namespace {

using ::testing::ElementsAre;
using testing::WriteFile;
using testing::WriteTempFile;

// The same three ratings in every format: users 196, 186; items 242, 302, 377.
const std::vector<Rating> kExpected = {{0, 0, 3.0f}, {1, 1, 4.5f}, {0, 2, 1.0f}};

void ExpectThreeRatings(const absl::StatusOr<Dataset>& d) {
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->num_users, 2);
  EXPECT_EQ(d->num_items, 3);
  EXPECT_THAT(d->user_ids, ElementsAre("196", "186"));
  EXPECT_THAT(d->item_ids, ElementsAre("242", "302", "377"));
  EXPECT_EQ(d->ratings, kExpected);
}

TEST(DataLoaderTest, MovieLens100KRoundTrip) {
  const std::string path = WriteTempFile(
      "u.data", "196\t242\t3\t881250949\n186\t302\t4.5\t891717742\n196\t377\t1\t878887116\n");
  auto d = LoadMovieLens100K(path);
  ExpectThreeRatings(d);
  EXPECT_EQ(d->source, "movielens:" + path);
  EXPECT_EQ(d->range.min, 0.5);
  EXPECT_EQ(d->range.max, 5.0);
}

TEST(DataLoaderTest, MovieLensDatRoundTrip) {
  const std::string path = WriteTempFile(
      "ratings.dat", "196::242::3::881250949\n186::302::4.5::891717742\n196::377::1::878887116\n");
  ExpectThreeRatings(LoadMovieLensDat(path));
}

TEST(DataLoaderTest, MovieLensCsvRoundTrip) {
  const std::string path = WriteTempFile("ratings.csv",
                                         "userId,movieId,rating,timestamp\n"
                                         "196,242,3.0,881250949\n"
                                         "186,302,4.5,891717742\n"
                                         "196,377,1.0,878887116\n");
  ExpectThreeRatings(LoadMovieLensCsv(path));
}

TEST(DataLoaderTest, GenericCsvWithAndWithoutHeader) {
  const std::string rows = "196,242,3\n186,302,4.5\n196,377,1\n";
  ExpectThreeRatings(LoadGenericCsv(WriteTempFile("plain.csv", rows)));
  auto d = LoadGenericCsv(WriteTempFile("header.csv", "user,item,rating\n" + rows));
  ExpectThreeRatings(d);
  EXPECT_EQ(d->source.rfind("csv:", 0), 0u) << d->source;
}

TEST(DataLoaderTest, GenericCsvKeepsStringIdsAndTrimsSpaces) {
  ASSERT_OK_AND_ASSIGN(auto d, LoadGenericCsv(WriteTempFile(
                                   "s.csv", "alice, matrix, 5\nbob,matrix,2\nalice,heat,4\n")));
  EXPECT_THAT(d.user_ids, ElementsAre("alice", "bob"));
  EXPECT_THAT(d.item_ids, ElementsAre("matrix", "heat"));
  EXPECT_EQ(d.ratings, (std::vector<Rating>{{0, 0, 5.0f}, {1, 0, 2.0f}, {0, 1, 4.0f}}));
}

TEST(DataLoaderTest, DenseIdsFollowFirstAppearance) {
  // Ids deliberately out of numeric order and sparse.
  auto d = ParseRatings("900,70,1\n5,70,2\n900,3,3\n12,1000,4\n5,3,5\n", RatingFormat::kGenericCsv,
                        "mem");
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT(d->user_ids, ElementsAre("900", "5", "12"));
  EXPECT_THAT(d->item_ids, ElementsAre("70", "3", "1000"));
  EXPECT_EQ(d->ratings, (std::vector<Rating>{
                            {0, 0, 1.0f}, {1, 0, 2.0f}, {0, 1, 3.0f}, {2, 2, 4.0f}, {1, 1, 5.0f}}));
}

TEST(DataLoaderTest, CrlfBomAndTrailingBlankLinesAreFine) {
  auto d = ParseRatings(
      "\xEF\xBB\xBF"
      "196\t242\t3\t1\r\n186\t302\t4.5\t2\r\n196\t377\t1\t3\r\n\r\n",
      RatingFormat::kMovieLens100K, "crlf");
  ExpectThreeRatings(d);
  auto no_final_newline =
      ParseRatings("196,242,3\n186,302,4.5\n196,377,1", RatingFormat::kGenericCsv, "eof");
  ExpectThreeRatings(no_final_newline);
}

TEST(DataLoaderTest, DeclaredRangeIsValidatedAndKept) {
  LoadOptions opts;
  opts.range = {1.0, 5.0};
  ASSERT_OK_AND_ASSIGN(auto d,
                       ParseRatings("1,1,1\n1,2,5\n", RatingFormat::kGenericCsv, "r", opts));
  EXPECT_EQ(d.range.min, 1.0);
  EXPECT_EQ(d.range.max, 5.0);
}

TEST(DataLoaderTest, LoadMovieLensDetectsEachFormat) {
  ExpectThreeRatings(
      LoadMovieLens(WriteTempFile("u.data", "196\t242\t3\t1\n186\t302\t4.5\t2\n196\t377\t1\t3\n")));
  ExpectThreeRatings(LoadMovieLens(
      WriteTempFile("ratings.dat", "196::242::3::1\n186::302::4.5::2\n196::377::1::3\n")));
  ExpectThreeRatings(LoadMovieLens(
      WriteTempFile("ratings.csv",
                    "userId,movieId,rating,timestamp\n196,242,3,1\n186,302,4.5,2\n196,377,1,3\n")));
  // The content decides when the name says nothing.
  ExpectThreeRatings(LoadMovieLens(
      WriteTempFile("export.txt", "196::242::3::1\n186::302::4.5::2\n196::377::1::3\n")));
}

TEST(DataLoaderTest, LoadMovieLensAcceptsADirectory) {
  const std::string dir = testing::MakeTempDir();
  WriteFile(dir, "u.data", "196\t242\t3\t1\n186\t302\t4.5\t2\n196\t377\t1\t3\n");
  WriteFile(dir, "u.item", "ignored");
  auto d = LoadMovieLens(dir);
  ExpectThreeRatings(d);
  EXPECT_EQ(d->source, "movielens:" + dir + "/u.data");
}

TEST(DataLoaderTest, LoadMovieLensDirectoryWithoutRatingsIsNotFound) {
  const std::string dir = testing::MakeTempDir();
  auto d = LoadMovieLens(dir);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(d.status().message()),
              ::testing::HasSubstr("u.data, ratings.dat, ratings.csv"));
}

TEST(DataLoaderTest, LoadMovieLensRejectsAnUndetectableFile) {
  const std::string path = WriteTempFile("export.txt", "1,2,3\n");
  auto d = LoadMovieLens(path);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), ::testing::StartsWith(path + ":1: cannot tell"));
  EXPECT_THAT(std::string(d.status().message()), ::testing::HasSubstr("csv:PATH"));
}

TEST(DataLoaderTest, MissingFileIsNotFound) {
  auto d = LoadMovieLens100K(testing::MakeTempDir() + "/nope/u.data");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(d.status().message()), ::testing::HasSubstr("nope/u.data"));
}

TEST(DataLoaderTest, ADirectoryIsNotARatingsFile) {
  auto d = LoadGenericCsv(testing::MakeTempDir());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), ::testing::HasSubstr("is a directory"));
}

}  // namespace
}  // namespace fedmf::data
