#include "common/base/mutex_checks.h"

#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace fedmf::base {
namespace {

// Takes two locks in one order and then in the other: what absl's run-time
// deadlock detection reports.
void InvertLockOrder() {
  absl::Mutex a;
  absl::Mutex b;
  {
    absl::MutexLock la(&a);
    absl::MutexLock lb(&b);
  }
  {
    absl::MutexLock lb(&b);
    absl::MutexLock la(&a);
  }
}

// Each case runs in a child process (a death test), so the process-wide
// mode set there leaves the rest of the suite as absl ships it.
TEST(MutexChecksTest, AsShippedTheLockOrderIsTrackedAndAnInversionAborts) {
  EXPECT_DEATH(InvertLockOrder(), "Potential Mutex deadlock");
}

#ifdef NDEBUG
TEST(MutexChecksTest, AProgramBuiltWithNdebugTurnsTheTrackingOff) {
  EXPECT_EXIT(
      {
        ConfigureMutexChecks();
        InvertLockOrder();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}
#endif

}  // namespace
}  // namespace fedmf::base
