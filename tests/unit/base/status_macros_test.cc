#include "common/base/status_macros.h"

#include <memory>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

absl::Status Check(int x) {
  if (x < 0) return absl::InvalidArgumentError("x must be >= 0");
  return absl::OkStatus();
}
absl::StatusOr<std::unique_ptr<int>> Make(int x) {  // move-only value
  if (x > 100) return absl::OutOfRangeError("x too large");
  return std::make_unique<int>(x);
}

int calls = 0;
absl::Status Twice(int x) {
  ++calls;  // the expression is evaluated exactly once
  RETURN_IF_ERROR(Check(x));
  RETURN_IF_ERROR(Make(x));  // a StatusOr's status
  return absl::OkStatus();
}

absl::StatusOr<int> Sum(int a, int b) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> pa, Make(a));
  ASSIGN_OR_RETURN(std::unique_ptr<int> pb, Make(b));  // two on adjacent lines
  int total = 0;
  ASSIGN_OR_RETURN(total, absl::StatusOr<int>(*pa + *pb));  // assigns an existing variable
  return total;
}

TEST(StatusMacrosTest, ReturnIfErrorPassesTheErrorThroughUnchanged) {
  calls = 0;
  EXPECT_THAT(Twice(3), IsOk());
  EXPECT_THAT(Twice(-1), StatusIs(absl::StatusCode::kInvalidArgument, "x must be >= 0"));
  EXPECT_THAT(Twice(101), StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("too large")));
  EXPECT_EQ(calls, 3);
}

TEST(StatusMacrosTest, AssignOrReturnMovesTheValueOrReturnsTheError) {
  absl::StatusOr<int> ok = Sum(2, 3);
  ASSERT_THAT(ok, IsOk());
  EXPECT_EQ(*ok, 5);
  EXPECT_THAT(Sum(2, 300), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(Sum(2, 300), Not(IsOk()));
}

TEST(StatusMatchersTest, DescribeTheStatusOnFailure) {
  const absl::Status err = absl::NotFoundError("no file x.csv");
  EXPECT_THAT(err, Not(IsOk()));
  EXPECT_THAT(err, Not(StatusIs(absl::StatusCode::kInvalidArgument)));
  EXPECT_THAT(err, StatusIs(absl::StatusCode::kNotFound, HasSubstr("x.csv")));
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(IsOk(), err, &listener));
  EXPECT_THAT(listener.str(), HasSubstr("no file x.csv"));
}

}  // namespace
}  // namespace fedmf
