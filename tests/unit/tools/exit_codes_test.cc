// The one exit-code scheme of every fedmf binary: usage (2), data (4),
// run-time failure (1), and the data mark surviving a prefixed message.
#include "common/cli/command_line.h"
#include "gtest/gtest.h"

namespace fedmf::cli {
namespace {

TEST(ExitCodesTest, UsageDataAndRuntimeFailuresAreTold) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), kExitOk);
  EXPECT_EQ(ExitCodeFor(absl::InvalidArgumentError("--T: must be >= 1")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("no job 'x'")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(absl::UnavailableError("failed to connect")), kExitFailure);
  EXPECT_EQ(ExitCodeFor(absl::InternalError("boom")), kExitFailure);
  const absl::Status bad_row = DataError(absl::InvalidArgumentError("a.csv:3: rating 7"));
  EXPECT_TRUE(IsDataError(bad_row));
  EXPECT_EQ(ExitCodeFor(bad_row), kExitData);
  EXPECT_EQ(ExitCodeFor(DataError(absl::NotFoundError("cannot open a.csv"))), kExitData);
  EXPECT_FALSE(IsDataError(DataError(absl::OkStatus())));
  EXPECT_EQ(kExitData, 4);
  EXPECT_EQ(kExitUsage, 2);
}

TEST(ExitCodesTest, APrefixKeepsTheCodeAndTheDataMark) {
  const absl::Status s =
      WithPrefix(DataError(absl::InvalidArgumentError("x.csv:2: bad")), "--data: ");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--data: x.csv:2: bad");
  EXPECT_TRUE(IsDataError(s));
  EXPECT_FALSE(IsDataError(WithPrefix(absl::InvalidArgumentError("bad flag"), "--T: ")));
}

}  // namespace
}  // namespace fedmf::cli
