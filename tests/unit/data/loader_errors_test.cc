// One test per kind of bad input: each must fail the whole load with
// InvalidArgument "<file>:<line>: <reason>" — nothing is silently dropped.
#include <string>

#include "absl/strings/str_cat.h"
#include "common/data/loaders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/data/test_files.h"

using ::fedmf::testing::StatusIs;

namespace fedmf::data {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::WriteTempFile;

void ExpectLoadError(const absl::StatusOr<Dataset>& d, const std::string& path, int line,
                     const std::string& reason) {
  ASSERT_THAT(d, StatusIs(absl::StatusCode::kInvalidArgument))
      << "loaded " << d->ratings.size() << " ratings from " << path;
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
  EXPECT_THAT(std::string(d.status().message()), StartsWith(absl::StrCat(path, ":", line, ": ")));
  EXPECT_THAT(std::string(d.status().message()), HasSubstr(reason));
}

TEST(DataLoaderErrorTest, NonNumericRating) {
  const std::string p = WriteTempFile("u.data", "1\t1\t3\t10\n1\t2\tfour\t10\n");
  ExpectLoadError(LoadMovieLens100K(p), p, 2, "rating 'four' is not a number");
}

TEST(DataLoaderErrorTest, RatingOutOfDeclaredRange) {
  const std::string p = WriteTempFile("u.data", "1\t1\t3\t10\n1\t2\t4\t10\n2\t1\t6\t10\n");
  ExpectLoadError(LoadMovieLens100K(p), p, 3, "rating 6 is outside the declared rating range");
  LoadOptions strict;
  strict.range = {1.0, 5.0};
  const std::string q =
      WriteTempFile("ratings.csv", "userId,movieId,rating,timestamp\n1,1,0.5,10\n");
  ExpectLoadError(LoadMovieLensCsv(q, strict), q, 2, "--rating-range MIN,MAX");
}

TEST(DataLoaderErrorTest, NanRating) {
  const std::string p = WriteTempFile("r.csv", "1,1,3\n1,2,nan\n");
  ExpectLoadError(LoadGenericCsv(p), p, 2, "rating 'nan' is not finite");
}

TEST(DataLoaderErrorTest, InfiniteRating) {
  const std::string p = WriteTempFile("ratings.dat", "1::1::3::5\n1::2::4::5\n1::3::inf::5\n");
  ExpectLoadError(LoadMovieLensDat(p), p, 3, "rating 'inf' is not finite");
}

TEST(DataLoaderErrorTest, MissingField) {
  const std::string p = WriteTempFile("u.data", "1\t1\t3\t10\n1\t2\t4\n");
  ExpectLoadError(LoadMovieLens100K(p), p, 2,
                  "missing field: expected 4 tab-separated fields (user, item, rating, timestamp) "
                  "but found 3");
}

TEST(DataLoaderErrorTest, EmptyField) {
  const std::string p = WriteTempFile("r.csv", "1,1,3\n,2,4\n");
  ExpectLoadError(LoadGenericCsv(p), p, 2, "missing field: the user id is empty");
  const std::string q = WriteTempFile("r.csv", "1,1,3\n1,2,\n");
  ExpectLoadError(LoadGenericCsv(q), q, 2, "missing field: the rating is empty");
}

TEST(DataLoaderErrorTest, ExtraField) {
  const std::string p = WriteTempFile("r.csv", "user,item,rating\n1,1,3\n1,2,4\n1,3,5,999\n");
  ExpectLoadError(LoadGenericCsv(p), p, 4, "extra field: expected 3 comma-separated fields");
  ExpectLoadError(LoadGenericCsv(p), p, 4, "remove the extra columns");
}

TEST(DataLoaderErrorTest, DuplicateUserItemPair) {
  const std::string p =
      WriteTempFile("ratings.dat", "7::1::3::1\n7::2::4::1\n8::1::5::1\n7::2::1::1\n");
  ExpectLoadError(LoadMovieLensDat(p), p, 4,
                  "duplicate rating for user '7' and item '2' (first rated on line 2); keep one "
                  "row per user-item pair");
}

TEST(DataLoaderErrorTest, DuplicateBeforeAnotherBadRowIsReportedFirst) {
  const std::string p = WriteTempFile("r.csv", "1,1,3\n1,2,3\n1,1,4\n1,3,x\n");
  ExpectLoadError(LoadGenericCsv(p), p, 3, "(first rated on line 1)");
  const std::string q = WriteTempFile("r.csv", "1,1,3\n1,2,x\n1,1,4\n");
  ExpectLoadError(LoadGenericCsv(q), q, 2, "rating 'x' is not a number");
}

TEST(DataLoaderErrorTest, MovieLensIdsCompareAsIntegers) {
  const std::string p = WriteTempFile("u.data", "7\t1\t3\t0\n007\t1\t4\t0\n");
  ExpectLoadError(LoadMovieLens100K(p), p, 2, "duplicate rating for user '7' and item '1'");
}

TEST(DataLoaderErrorTest, DuplicateLineNumbersCountTheHeader) {
  const std::string p =
      WriteTempFile("ratings.csv", "userId,movieId,rating,timestamp\n1,1,3,0\n1,1,3,0\n");
  ExpectLoadError(LoadMovieLensCsv(p), p, 3, "(first rated on line 2)");
}

TEST(DataLoaderErrorTest, EmptyFile) {
  const std::string p = WriteTempFile("u.data", "");
  ExpectLoadError(LoadMovieLens100K(p), p, 1, "no ratings: the file is empty");
  const std::string q = WriteTempFile("u.data", "\n\r\n");
  ExpectLoadError(LoadMovieLens100K(q), q, 1, "no ratings: the file is empty");
}

TEST(DataLoaderErrorTest, OtherSeparatorIsNamed) {
  // A tab-separated file given as csv: — header and data rows alike.
  const std::string h = WriteTempFile("tab.tsv", "user\titem\trating\n1\t1\t5\n");
  ExpectLoadError(LoadGenericCsv(h), h, 1,
                  "the line is separated by tabs but this format is comma-separated (MovieLens "
                  "u.data's tab format: movielens:PATH)");
  const std::string d = WriteTempFile("tab2.tsv", "1\t1\t5\n");
  ExpectLoadError(LoadGenericCsv(d), d, 1, "the line is separated by tabs");
  const std::string c = WriteTempFile("semi.csv", "1;1;5\n");
  ExpectLoadError(LoadGenericCsv(c), c, 1, "separated by semicolons but this format is comma");
  // u.data with commas.
  const std::string u = WriteTempFile("u.data", "1,1,3,10\n");
  ExpectLoadError(LoadMovieLens100K(u), u, 1,
                  "separated by commas but this format is tab-separated");
}

TEST(DataLoaderErrorTest, HeaderWithoutRatings) {
  const std::string p = WriteTempFile("ratings.csv", "userId,movieId,rating,timestamp\n");
  ExpectLoadError(LoadMovieLensCsv(p), p, 2, "no ratings after the header");
}

TEST(DataLoaderErrorTest, BlankLineInsideTheData) {
  const std::string p = WriteTempFile("u.data", "1\t1\t3\t10\n\n1\t2\t4\t10\n");
  ExpectLoadError(LoadMovieLens100K(p), p, 2, "blank line inside the data; delete it");
}

TEST(DataLoaderErrorTest, NonIntegerMovieLensId) {
  const std::string p = WriteTempFile("ratings.dat", "1::1::3::1\nx7::2::4::1\n");
  ExpectLoadError(LoadMovieLensDat(p), p, 2, "user id 'x7' is not a non-negative integer");
  const std::string q = WriteTempFile("u.data", "1\t1\t3\t1\n1\t-2\t4\t1\n");
  ExpectLoadError(LoadMovieLens100K(q), q, 2, "item id '-2' is not a non-negative integer");
}

TEST(DataLoaderErrorTest, BadTimestamp) {
  const std::string p = WriteTempFile("u.data", "1\t1\t3\t10\n1\t2\t4\tyesterday\n");
  ExpectLoadError(LoadMovieLens100K(p), p, 2, "timestamp 'yesterday' is not an integer");
}

TEST(DataLoaderErrorTest, WrongMovieLensCsvHeader) {
  const std::string p = WriteTempFile("ratings.csv", "1,1,3,10\n");
  ExpectLoadError(LoadMovieLensCsv(p), p, 1,
                  "expected the MovieLens header 'userId,movieId,rating,timestamp'");
  ExpectLoadError(LoadMovieLensCsv(p), p, 1, "use csv:PATH");
}

TEST(DataLoaderErrorTest, GenericHeaderWithWrongColumnCount) {
  const std::string p = WriteTempFile("r.csv", "userId,movieId,rating,timestamp\n1,1,3,10\n");
  ExpectLoadError(LoadGenericCsv(p), p, 1, "header has 4 columns");
}

TEST(DataLoaderErrorTest, BadFirstRowIsNotMistakenForAHeader) {
  const std::string p = WriteTempFile("r.csv", "1,2,oops\n1,3,4\n");
  ExpectLoadError(LoadGenericCsv(p), p, 1, "rating 'oops' is not a number");
}

TEST(DataLoaderErrorTest, CrlfDoesNotShiftLineNumbers) {
  const std::string p = WriteTempFile("u.data", "1\t1\t3\t10\r\n1\t2\t4\t10\r\n1\t3\t9\t10\r\n");
  ExpectLoadError(LoadMovieLens100K(p), p, 3, "rating 9 is outside");
}

TEST(DataLoaderErrorTest, InvalidDeclaredRange) {
  LoadOptions bad;
  bad.range = {5.0, 1.0};
  auto d = ParseRatings("1,1,3\n", RatingFormat::kGenericCsv, "mem", bad);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("need finite min < max"));
}

TEST(DataLoaderErrorTest, ParseRatingsUsesTheGivenName) {
  auto d = ParseRatings("1\t1\t3\t1\n1\t1\t3\t1\n", RatingFormat::kMovieLens100K, "buffer");
  ExpectLoadError(d, "buffer", 2, "duplicate rating");
}

}  // namespace
}  // namespace fedmf::data
