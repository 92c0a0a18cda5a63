#include "party/state_dir_lock.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "party/state_id.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fedmf::party {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

class StateDirLockTest : public ::testing::Test {
 protected:
  const fedmf::testing::ScopedTempDir tmp_{"fedmf_state_lock."};
  const std::string dir_ = tmp_.path();
};

TEST_F(StateDirLockTest, ASecondHolderIsRefusedNamingTheDirAndThePid) {
  absl::StatusOr<StateDirLock> first = StateDirLock::Acquire(dir_);
  ASSERT_THAT(first, IsOk());
  // flock(2) locks belong to the open file description, so a second open in
  // this same process conflicts exactly as another process would.
  EXPECT_THAT(StateDirLock::Acquire(dir_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("state_dir " + dir_ + " is in use by another fedmf-party"),
                             HasSubstr("pid " + std::to_string(::getpid())),
                             HasSubstr("give this party its own state_dir"))));
}

TEST_F(StateDirLockTest, ReleasedWhenTheHolderGoesAway) {
  std::optional<StateDirLock> held;
  {
    absl::StatusOr<StateDirLock> first = StateDirLock::Acquire(dir_);
    ASSERT_THAT(first, IsOk());
    held.emplace(*std::move(first));  // moving keeps it held
  }
  EXPECT_THAT(StateDirLock::Acquire(dir_), StatusIs(absl::StatusCode::kFailedPrecondition));
  held.reset();
  EXPECT_THAT(StateDirLock::Acquire(dir_), IsOk());
}

TEST_F(StateDirLockTest, UnwritableDirectoryIsAClearError) {
  EXPECT_THAT(
      StateDirLock::Acquire(dir_ + "/missing/sub"),
      StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("cannot open the state lock")));
}

}  // namespace
}  // namespace fedmf::party

namespace fedmf::party {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

class StateIdTest : public StateDirLockTest {};

TEST_F(StateIdTest, CreatedOnceThenStable) {
  absl::StatusOr<std::string> first = LoadOrCreateStateId(dir_);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->size(), 32u);
  EXPECT_EQ(first->find_first_not_of("0123456789abcdef"), std::string::npos) << *first;
  absl::StatusOr<std::string> again = LoadOrCreateStateId(dir_);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(*again, *first);
  // Another directory is another party.
  const std::string other = dir_ + "/other";
  std::filesystem::create_directories(other);
  absl::StatusOr<std::string> elsewhere = LoadOrCreateStateId(other);
  ASSERT_THAT(elsewhere, IsOk());
  EXPECT_NE(*elsewhere, *first);
}

TEST_F(StateIdTest, ACorruptIdIsAnErrorNamingTheFile) {
  std::ofstream(dir_ + "/party.id") << "not-an-id\n";
  EXPECT_THAT(LoadOrCreateStateId(dir_),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(dir_ + "/party.id: not a party state id (32 hex digits)")));
}

}  // namespace
}  // namespace fedmf::party
