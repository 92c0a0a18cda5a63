// Against the real MovieLens 100K in ../shared (GroupLens terms: never copied
// into the repository). Skips with a message where it is absent.
#include <filesystem>
#include <string>

#include "common/data/loaders.h"
#include "common/data/partition.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::data {
namespace {

const std::string kDir = FEDMF_SHARED_DIR "/data/ml-100k";

#define SKIP_IF_NO_ML100K()                                                                     \
  if (!std::filesystem::exists(kDir + "/u.data") || !std::filesystem::exists(kDir + "/u.item")) \
  GTEST_SKIP()                                                                                  \
      << kDir                                                                                   \
      << " absent (../shared dataset): MovieLens 100K (u.data, u.item) is not available here; " \
      << "put the GroupLens ml-100k directory at ../shared/data/ml-100k to run this"

TEST(DataMovieLens100KTest, LoadsTheWholeDataset) {
  SKIP_IF_NO_ML100K();
  ASSERT_OK_AND_ASSIGN(auto d, LoadDataSpec("movielens:" + kDir));
  EXPECT_EQ(d.num_users, 943);
  EXPECT_EQ(d.num_items, 1682);
  EXPECT_EQ(d.ratings.size(), 100000u);
  ASSERT_OK_AND_ASSIGN(auto strict, LoadMovieLens100K(kDir + "/u.data", LoadOptions{{1.0, 5.0}}));
  EXPECT_EQ(strict.ratings, d.ratings);
}

TEST(DataMovieLens100KTest, GenrePartitionHasOnePartyPerGenre) {
  SKIP_IF_NO_ML100K();
  ASSERT_OK_AND_ASSIGN(auto d, LoadMovieLens(kDir));
  auto genres = LoadMovieLensGenres(kDir + "/u.item", d);
  ASSERT_THAT(genres, IsOk());
  ASSERT_EQ(genres->size(), 1682u);
  ASSERT_OK_AND_ASSIGN(auto fed, PartitionVflByGenre(d, *genres, {0.1, 1}));
  // All 19 u.item genres keep at least one movie under the smallest-genre
  // rule (even "unknown", which flags 2 movies).
  EXPECT_EQ(fed.parties.size(), 19u);
  size_t items = 0, ratings = 0;
  for (const PartyData& p : fed.parties) {
    items += p.global_items.size();
    ratings += p.train.size() + p.test.size();
  }
  EXPECT_EQ(items, 1682u);
  EXPECT_EQ(ratings, 100000u);
}

TEST(DataMovieLens100KTest, StandardPartitionsCoverEverything) {
  SKIP_IF_NO_ML100K();
  ASSERT_OK_AND_ASSIGN(auto d, LoadMovieLens(kDir + "/u.data"));
  for (auto fed : {PartitionVflRandom(d, 18, {}), PartitionHfl(d, 10, {}), PartitionLfl(d, {}),
                   PartitionCentral(d, {})}) {
    ASSERT_THAT(fed, IsOk());
    size_t train = 0, test = 0;
    for (const PartyData& p : fed->parties) {
      train += p.train.size();
      test += p.test.size();
    }
    EXPECT_EQ(train + test, 100000u);
    EXPECT_NEAR(static_cast<double>(test), 10000.0, 0.05 * 10000 + fed->parties.size());
  }
}

}  // namespace
}  // namespace fedmf::data
