#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/data/loaders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/data/test_files.h"

using ::fedmf::testing::IsOk;

namespace fedmf::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// A u.item line: id, title, dates, url and the 19 flags given as a string.
std::string ItemLine(const std::string& id, const std::string& title, const std::string& flags) {
  std::string line = absl::StrCat(id, "|", title, "|01-Jan-1995||http://example/", id);
  for (char c : flags) absl::StrAppend(&line, "|", std::string(1, c));
  return line + "\n";
}

Dataset RatedItems(const std::vector<std::string>& item_ids) {
  std::string rows;
  for (const std::string& id : item_ids) absl::StrAppend(&rows, "1\t", id, "\t3\t0\n");
  auto d = ParseRatings(rows, RatingFormat::kMovieLens100K, "mem");
  EXPECT_THAT(d, IsOk());
  return *d;
}

TEST(DataGenresTest, ParsesFlagsPerDenseItem) {
  const std::string path = testing::WriteTempFile(
      "u.item", ItemLine("1", "Toy Story (1995)", "0001110000000000000") +
                    // Latin-1 title bytes pass through untouched.
                    ItemLine("2", "Caf\xe9 au lait (1993)", "0000000010000001000") +
                    ItemLine("3", "Unrated movie", "0100000000000000000") +
                    ItemLine("4", "No genre at all", "0000000000000000000") +
                    ItemLine("5", "unknown", "1000000000000000000") + "\r\n");
  // Dense item order differs from the u.item order on purpose.
  const Dataset d = RatedItems({"4", "2", "1", "5"});
  ASSERT_OK_AND_ASSIGN(auto genres, LoadMovieLensGenres(path, d));
  ASSERT_EQ(genres.size(), 4u);
  EXPECT_THAT((genres)[0], IsEmpty());             // "4"
  EXPECT_THAT((genres)[1], ElementsAre(8, 15));    // "2": Drama, Sci-Fi
  EXPECT_THAT((genres)[2], ElementsAre(3, 4, 5));  // "1": Animation, Children's, Comedy
  EXPECT_THAT((genres)[3], ElementsAre(0));        // "5": unknown
  EXPECT_EQ(kMovieLensGenreNames[8], "Drama");
}

TEST(DataGenresTest, CrlfLinesAreFine) {
  std::string line = ItemLine("1", "T", "0000010000000000000");
  line.pop_back();  // "\n"
  line += "\r\n";
  ASSERT_OK_AND_ASSIGN(
      auto genres, LoadMovieLensGenres(testing::WriteTempFile("u.item", line), RatedItems({"1"})));
  EXPECT_THAT((genres)[0], ElementsAre(5));
}

TEST(DataGenresTest, RatedItemMissingFromUItemIsAnError) {
  const std::string path =
      testing::WriteTempFile("u.item", ItemLine("1", "T", "0000010000000000000"));
  auto genres = LoadMovieLensGenres(path, RatedItems({"1", "99"}));
  EXPECT_EQ(genres.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(genres.status().message()), HasSubstr("item '99'"));
  EXPECT_THAT(std::string(genres.status().message()), HasSubstr("has no line in this u.item"));
}

TEST(DataGenresTest, BadFlagNamesFileLineAndGenre) {
  const std::string path =
      testing::WriteTempFile("u.item", ItemLine("1", "T", "0000010000000000000") +
                                           ItemLine("2", "U", "000001000000000000x"));
  auto genres = LoadMovieLensGenres(path, RatedItems({"1", "2"}));
  EXPECT_THAT(std::string(genres.status().message()), StartsWith(path + ":2: "));
  EXPECT_THAT(std::string(genres.status().message()),
              HasSubstr("genre flag 18 (Western) is 'x', expected 0 or 1"));
}

TEST(DataGenresTest, TooFewFieldsIsAnError) {
  const std::string path =
      testing::WriteTempFile("u.item", ItemLine("1", "T", "0000010000000000000") + "2|Short|0|1\n");
  auto genres = LoadMovieLensGenres(path, RatedItems({"1"}));
  EXPECT_THAT(std::string(genres.status().message()), StartsWith(path + ":2: "));
  EXPECT_THAT(std::string(genres.status().message()), HasSubstr("found 4 fields"));
}

TEST(DataGenresTest, DuplicateMovieIdIsAnError) {
  const std::string path =
      testing::WriteTempFile("u.item", ItemLine("1", "T", "0000010000000000000") +
                                           ItemLine("1", "T", "0000010000000000000"));
  auto genres = LoadMovieLensGenres(path, RatedItems({"1"}));
  EXPECT_THAT(std::string(genres.status().message()), StartsWith(path + ":2: "));
  EXPECT_THAT(std::string(genres.status().message()), HasSubstr("first on line 1"));
}

TEST(DataGenresTest, MissingFileIsNotFound) {
  auto genres = LoadMovieLensGenres(testing::MakeTempDir() + "/u.item", RatedItems({"1"}));
  EXPECT_EQ(genres.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fedmf::data
