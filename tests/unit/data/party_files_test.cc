#include "common/data/party_files.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data/catalogue.h"
#include "common/data/loaders.h"
#include "common/random/csprng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::data {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(CatalogueTest, ParsesOneIdPerLineAndDigestsTheIdsOnly) {
  auto a = Catalogue::Parse("# films\nm-10\n\n  m-2 \nm-7\r\n", "a.txt");
  auto b = Catalogue::Parse("m-10\nm-2\nm-7\n", "b.txt");
  auto c = Catalogue::Parse("m-2\nm-10\nm-7\n", "c.txt");
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(a->ids(), (std::vector<std::string>{"m-10", "m-2", "m-7"}));
  EXPECT_EQ(a->digest(), b->digest());
  EXPECT_NE(a->digest(), c->digest());  // the order is part of the catalogue
  EXPECT_EQ(a->digest().rfind("sha256:", 0), 0u);
  EXPECT_EQ(a->digest().size(), 7u + 64u);
  EXPECT_EQ(a->Find("m-2"), 1);
  EXPECT_EQ(a->Find("m-3"), std::nullopt);
}

TEST(CatalogueTest, RepeatedOrNoIdsAreErrorsNamingTheLines) {
  EXPECT_THAT(Catalogue::Parse("a\nb\n\na\n", "cat.txt").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cat.txt:4: item id 'a' is already on line 1")));
  EXPECT_THAT(Catalogue::Parse("# nothing\n\n", "cat.txt").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lists no item ids")));
}

// A partner's file with string ids, rows in a given order.
Dataset Csv(const std::vector<std::string>& rows, const std::string& name) {
  auto d = ParseRatings("user,item,rating\n" + absl::StrJoin(rows, "\n") + "\n",
                        RatingFormat::kGenericCsv, name, LoadOptions{{1, 5}});
  EXPECT_THAT(d.status(), IsOk());
  return *d;
}

// Party 0 rates films a..f, party 1 films c..h; users are their own.
std::vector<std::string> Rows(int party, uint64_t seed) {
  std::vector<std::string> rows;
  const std::string films = party == 0 ? "abcdef" : "cdefgh";
  for (int u = 0; u < 12; ++u) {
    for (size_t f = 0; f < films.size(); ++f) {
      if ((u + f) % 3 == 0) continue;
      rows.push_back(absl::StrCat("cust-", party, "-", u, ",film-", std::string(1, films[f]), ",",
                                  1 + (u * 7 + f) % 5));
    }
  }
  random::Csprng rng = random::Csprng::FromSeed(seed);
  std::shuffle(rows.begin(), rows.end(), rng);
  return rows;
}

TEST(FederateByItemCatalogueTest, RowOrderDoesNotChangeTheFederation) {
  auto cat = Catalogue::Parse("film-h\nfilm-a\nfilm-b\nfilm-c\nfilm-d\nfilm-e\nfilm-f\nfilm-g\n",
                              "films.txt");
  ASSERT_THAT(cat.status(), IsOk());
  const SplitOptions split{0.2, 3};
  auto one =
      FederateByItemCatalogue({Csv(Rows(0, 1), "a.csv"), Csv(Rows(1, 2), "b.csv")}, *cat, split);
  auto two =
      FederateByItemCatalogue({Csv(Rows(0, 8), "a.csv"), Csv(Rows(1, 9), "b.csv")}, *cat, split);
  ASSERT_THAT(one.status(), IsOk());
  ASSERT_THAT(two.status(), IsOk());
  ASSERT_EQ(one->federation.parties.size(), 2u);
  EXPECT_EQ(one->shared, 8);
  EXPECT_EQ(one->federation.num_items, 8);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(one->federation.parties[k].train, two->federation.parties[k].train) << k;
    EXPECT_EQ(one->federation.parties[k].test, two->federation.parties[k].test) << k;
    EXPECT_EQ(one->own_entities[k], 12);
    EXPECT_EQ(one->dropped_ratings[k], 0);
  }
  // Items land at their catalogue positions: film-h is item 0 and only
  // party 1 has it.
  auto has_item = [](const PartyData& p, int32_t item) {
    auto rated = [&](const Rating& r) { return r.item == item; };
    return std::any_of(p.train.begin(), p.train.end(), rated) ||
           std::any_of(p.test.begin(), p.test.end(), rated);
  };
  EXPECT_FALSE(has_item(one->federation.parties[0], 0));
  EXPECT_TRUE(has_item(one->federation.parties[1], 0));
  EXPECT_TRUE(has_item(one->federation.parties[0], 1));  // film-a
  EXPECT_FALSE(has_item(one->federation.parties[1], 1));
}

TEST(FederateByItemCatalogueTest, ItemsOutsideTheCatalogueAreDroppedAndCounted) {
  auto cat = Catalogue::Parse("film-a\nfilm-b\nfilm-c\nfilm-d\n", "films.txt");
  auto fed = FederateByItemCatalogue({Csv(Rows(0, 1), "a.csv"), Csv(Rows(1, 2), "b.csv")}, *cat,
                                     SplitOptions{0.1, 1});
  ASSERT_THAT(fed.status(), IsOk());
  // Party 0 rates e, f outside it; party 1 rates e, f, g, h.
  int64_t outside0 = 0;
  for (const std::string& r : Rows(0, 1))
    outside0 += r.find("film-e") != std::string::npos || r.find("film-f") != std::string::npos;
  EXPECT_EQ(fed->dropped_ratings[0], outside0);
  EXPECT_GT(fed->dropped_ratings[1], fed->dropped_ratings[0]);
  // The warning names the count and the first dropped row's file:line (the
  // header is line 1, row r of Rows() is on line r + 2).
  const std::vector<std::string> rows0 = Rows(0, 1);
  size_t first_outside = 0;
  while (rows0[first_outside].find("film-e") == std::string::npos &&
         rows0[first_outside].find("film-f") == std::string::npos) {
    ++first_outside;
  }
  EXPECT_EQ(fed->first_dropped_row[0], static_cast<int64_t>(first_outside));
  EXPECT_EQ(DroppedRatingsMessage(Csv(rows0, "a.csv"), *fed, 0, "items outside the catalogue"),
            absl::StrCat("csv:a.csv: ", outside0, " of its ", rows0.size(),
                         " ratings are left out (items outside the catalogue); the first is a.csv:",
                         first_outside + 2));
  auto none = Catalogue::Parse("movie-1\n", "other.txt");
  // Named by its file, never "party 0" (a daemon has a name of its own).
  EXPECT_THAT(FederateByItemCatalogue({Csv(Rows(0, 1), "a.csv")}, *none, SplitOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("csv:a.csv: none of its 6 item ids is in the catalogue "
                                       "other.txt"),
                             HasSubstr("on a.csv:2"), HasSubstr("another item-id scheme"),
                             Not(HasSubstr("party 0")))));
}

TEST(FederateByItemCatalogueTest, PartiesMustDeclareOneScale) {
  Dataset a = Csv(Rows(0, 1), "a.csv");
  Dataset b = Csv(Rows(1, 1), "b.csv");
  b.range = {0.5, 5};
  ASSERT_OK_AND_ASSIGN(auto cat, Catalogue::FromIds(ItemIdUnion({a, b}), "union"));
  EXPECT_EQ(cat.size(), 8);
  EXPECT_THAT(FederateByItemCatalogue({a, b}, cat, SplitOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--rating-range")));
}

TEST(FederateBySharedUsersTest, RowsFollowTheSharedOrderAndOthersAreDropped) {
  // VFL: both parties know users "p1".."p4" (party 1 names them the same),
  // party 0 also "p0", party 1 also "p9".
  Dataset a = Csv({"p3,x1,5", "p1,x1,4", "p0,x2,3", "p2,x2,2", "p4,x1,1"}, "a.csv");
  Dataset b = Csv({"p9,y1,5", "p4,y2,4", "p1,y1,3", "p2,y1,2", "p3,y2,1"}, "b.csv");
  const std::vector<std::string> order = {"p4", "p2", "p1", "p3"};  // as a PSI would give it
  ASSERT_OK_AND_ASSIGN(auto fed,
                       FederateBySharedUsers({a, b}, {order, order}, SplitOptions{0.0, 1}));
  EXPECT_EQ(fed.shared, 4);
  EXPECT_EQ(fed.federation.num_users, 4);
  EXPECT_EQ(fed.dropped_ratings, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(fed.own_entities, (std::vector<int32_t>{2, 2}));
  // Party 0: p4 (row 0) rated x1 = 1, p2 (row 1) x2 = 2, p1 (row 2) x1 = 4,
  // p3 (row 3) x1 = 5.
  const std::vector<Rating> expected0 = {{0, 0, 1}, {1, 1, 2}, {2, 0, 4}, {3, 0, 5}};
  EXPECT_EQ(fed.federation.parties[0].train, expected0);
  const std::vector<Rating> expected1 = {{0, 1, 4}, {1, 0, 2}, {2, 0, 3}, {3, 1, 1}};
  EXPECT_EQ(fed.federation.parties[1].train, expected1);
  EXPECT_THAT(FederateBySharedUsers({a, b}, {{}, {}}, SplitOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("share no user")));
}

}  // namespace
}  // namespace fedmf::data
