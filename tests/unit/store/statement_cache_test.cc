// store::Database's statement cache: a text is compiled once and handed out
// again, each use starts from a reset statement with no values bound, a
// nested use of the same text gets a statement of its own, and the cache
// stays within its bound.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/store/sqlite.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fedmf::store {
namespace {

using ::fedmf::testing::IsOk;
using ::testing::ElementsAre;

class StatementCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto db, Database::Open(dir_.Path("t.db")));
    db_ = std::move(db);
    ASSERT_THAT(db_->Exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);"
                          "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');"),
                IsOk());
  }
  void TearDown() override { db_.reset(); }

  // Every value of column v, in key order, through a fresh Prepare.
  std::vector<std::string> Values() {
    auto st = db_->Prepare("SELECT v FROM t ORDER BY k");
    EXPECT_THAT(st.status(), IsOk());
    auto values = st->TextColumn(0);
    EXPECT_THAT(values.status(), IsOk());
    return *values;
  }

  ::fedmf::testing::ScopedTempDir dir_{"fedmf-stmt-cache-"};
  std::unique_ptr<Database> db_;
};

TEST_F(StatementCacheTest, ATextIsCompiledOnceAndReused) {
  EXPECT_EQ(db_->cached_statements(), 0u);  // Exec does not cache
  EXPECT_THAT(Values(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(db_->cached_statements(), 1u);
  EXPECT_THAT(Values(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(db_->cached_statements(), 1u);
  ASSERT_THAT(db_->Run("BEGIN IMMEDIATE;"), IsOk());
  ASSERT_THAT(db_->Run("COMMIT;"), IsOk());
  EXPECT_EQ(db_->cached_statements(), 3u);
}

TEST_F(StatementCacheTest, AStatementLeftMidwayStartsOverOnItsNextUse) {
  {
    auto st = db_->Prepare("SELECT v FROM t ORDER BY k");
    ASSERT_THAT(st.status(), IsOk());
    ASSERT_TRUE(*st->Step());
    EXPECT_EQ(st->ColumnText(0), "a");
    ASSERT_TRUE(*st->Step());
    EXPECT_EQ(st->ColumnText(0), "b");
  }  // returned to the cache after two of three rows
  EXPECT_EQ(db_->cached_statements(), 1u);
  // The abandoned read ended: a write transaction commits.
  ASSERT_THAT(db_->Run("BEGIN IMMEDIATE;"), IsOk());
  ASSERT_THAT(db_->Run("UPDATE t SET v = 'z' WHERE k = 1;"), IsOk());
  ASSERT_THAT(db_->Run("COMMIT;"), IsOk());
  EXPECT_THAT(Values(), ElementsAre("z", "b", "c"));
}

TEST_F(StatementCacheTest, ValuesBoundByOneUseAreNotSeenByTheNext) {
  const std::string insert = "INSERT INTO t (k, v) VALUES (?, ?)";
  {
    ASSERT_OK_AND_ASSIGN(auto st, db_->Prepare(insert));
    st.Bind(1, int64_t{4}).Bind(2, "d");
    ASSERT_THAT(st.Run(), IsOk());
  }
  {
    ASSERT_OK_AND_ASSIGN(auto st, db_->Prepare(insert));
    st.Bind(1, int64_t{5});  // v left unbound: NULL, not the previous "d"
    ASSERT_THAT(st.Run(), IsOk());
  }
  auto st = db_->Prepare("SELECT v IS NULL FROM t WHERE k = 5");
  ASSERT_THAT(st.status(), IsOk());
  ASSERT_TRUE(*st->Step());
  EXPECT_EQ(st->ColumnInt(0), 1);
  EXPECT_EQ(db_->cached_statements(), 2u);
}

TEST_F(StatementCacheTest, ANestedUseOfTheSameTextGetsItsOwnStatement) {
  const std::string select = "SELECT v FROM t WHERE k >= ? ORDER BY k";
  auto outer = db_->Prepare(select);
  ASSERT_THAT(outer.status(), IsOk());
  outer->Bind(1, int64_t{1});
  std::vector<std::string> pairs;
  while (*outer->Step()) {
    const std::string o = outer->ColumnText(0);
    auto inner = db_->Prepare(select);  // the cached one is in use
    ASSERT_THAT(inner.status(), IsOk());
    inner->Bind(1, int64_t{3});
    ASSERT_TRUE(*inner->Step());
    pairs.push_back(o + inner->ColumnText(0));
  }
  EXPECT_THAT(pairs, ElementsAre("ac", "bc", "cc"));
  EXPECT_EQ(db_->cached_statements(), 1u);
}

TEST_F(StatementCacheTest, AMovedStatementIsReturnedOnce) {
  ASSERT_OK_AND_ASSIGN(auto st, db_->Prepare("SELECT v FROM t ORDER BY k"));
  Statement moved = std::move(st);
  Statement target = std::move(moved);
  ASSERT_TRUE(*target.Step());
  EXPECT_EQ(target.ColumnText(0), "a");
  // Assigning over a borrowed statement returns it before taking the other.
  ASSERT_OK_AND_ASSIGN(auto other, db_->Prepare("SELECT k FROM t ORDER BY k"));
  target = std::move(other);
  ASSERT_TRUE(*target.Step());
  EXPECT_EQ(target.ColumnInt(0), 1);
  EXPECT_THAT(Values(), ElementsAre("a", "b", "c"));  // the first text is free again
  EXPECT_EQ(db_->cached_statements(), 2u);
}

TEST_F(StatementCacheTest, TextsBeyondTheBoundAreCompiledEachTime) {
  for (size_t i = 0; i < Database::kCachedStatements + 10; ++i) {
    auto st = db_->Prepare("SELECT k FROM t WHERE k = " + std::to_string(i % 3 + 1) + " AND " +
                           std::to_string(i) + " = " + std::to_string(i));
    ASSERT_THAT(st.status(), IsOk());
    ASSERT_TRUE(*st->Step());
    EXPECT_EQ(st->ColumnInt(0), static_cast<int64_t>(i % 3 + 1));
  }
  EXPECT_EQ(db_->cached_statements(), Database::kCachedStatements);
}

TEST_F(StatementCacheTest, StatementsMayOutliveTheirDatabase) {
  auto cached = db_->Prepare("SELECT v FROM t ORDER BY k");
  ASSERT_THAT(cached.status(), IsOk());
  auto nested = db_->Prepare("SELECT v FROM t ORDER BY k");  // not cached: the text is in use
  ASSERT_THAT(nested.status(), IsOk());
  ASSERT_TRUE(*cached->Step());
  db_.reset();  // both still usable, each finalized when it goes
  EXPECT_EQ(cached->ColumnText(0), "a");
  ASSERT_TRUE(*nested->Step());
  EXPECT_EQ(nested->ColumnText(0), "a");
  ASSERT_TRUE(*cached->Step());
  EXPECT_EQ(cached->ColumnText(0), "b");
}

TEST_F(StatementCacheTest, ARunErrorNamesTheStatement) {
  ASSERT_THAT(db_->Run("BEGIN IMMEDIATE;"), IsOk());
  EXPECT_THAT(db_->Run("INSERT INTO t (k, v) VALUES (1, 'dup')"),
              testing::StatusIs(absl::StatusCode::kInternal,
                                ::testing::AllOf(::testing::HasSubstr("UNIQUE constraint failed"),
                                                 ::testing::HasSubstr("in: INSERT INTO t"))));
  ASSERT_THAT(db_->Run("ROLLBACK;"), IsOk());
  EXPECT_THAT(Values(), ElementsAre("a", "b", "c"));
}

}  // namespace
}  // namespace fedmf::store
