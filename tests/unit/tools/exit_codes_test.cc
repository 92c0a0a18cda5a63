// The one exit-code scheme of every fedmf binary: usage (2), data (4),
// run-time failure (1), and the data mark surviving a prefixed message.
#include "common/cli/command_line.h"
#include "gtest/gtest.h"

using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;

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

TEST(ExitCodesTest, MarksOverrideTheCode) {
  // A run that failed after its command line was accepted: 1, whatever the code.
  EXPECT_EQ(ExitCodeFor(RuntimeError(absl::InvalidArgumentError("simulation refused"))),
            kExitFailure);
  // A usage error whatever the code.
  EXPECT_EQ(ExitCodeFor(UsageError(absl::InternalError("job from flags"))), kExitUsage);
  // Marks survive a prefix, and a data mark wins (the file is what to fix).
  EXPECT_EQ(ExitCodeFor(WithPrefix(RuntimeError(absl::NotFoundError("x")), "--plot: ")),
            kExitFailure);
  EXPECT_EQ(ExitCodeFor(RuntimeError(DataError(absl::InternalError("a.csv")))), kExitData);
  EXPECT_TRUE(RuntimeError(absl::OkStatus()).ok());
  EXPECT_TRUE(UsageError(absl::OkStatus()).ok());
}

TEST(ExitCodesTest, ReportPrintsOneLineAndReturnsTheExitCode) {
  CaptureStderr();
  const int usage =
      Report("fedmf ca init", absl::InvalidArgumentError("--days must be at least 1"));
  EXPECT_EQ(GetCapturedStderr(), "fedmf ca init: --days must be at least 1\n");
  EXPECT_EQ(usage, kExitUsage);
  CaptureStderr();
  const int runtime =
      Report("fedmf ca init", absl::InternalError("cannot create directory d: Not a directory"));
  EXPECT_EQ(GetCapturedStderr(), "fedmf ca init: cannot create directory d: Not a directory\n");
  EXPECT_EQ(runtime, kExitFailure);
  CaptureStderr();
  const int data = Report("fedmf train: --data", DataError(absl::InvalidArgumentError("a.csv:3")));
  EXPECT_EQ(GetCapturedStderr(), "fedmf train: --data: a.csv:3\n");
  EXPECT_EQ(data, kExitData);
}

}  // namespace
}  // namespace fedmf::cli
