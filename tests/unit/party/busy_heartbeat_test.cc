#include "party/busy_heartbeat.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "gtest/gtest.h"

namespace fedmf::party {
namespace {

using std::chrono::milliseconds;

TEST(BusyHeartbeatTest, BeatsEveryIntervalUntilDestroyedThenNeverAgain) {
  std::mutex mu;
  std::condition_variable cv;
  int seen = 0;
  {
    BusyHeartbeat hb(milliseconds(10), [&] {
      std::lock_guard lock(mu);
      ++seen;
      cv.notify_all();
    });
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return seen >= 3; }))
        << "3 beats at a 10 ms interval did not arrive in 10 s";
    lock.unlock();
    // beats() counts completed beats: at least the 3 observed (a 4th may be in flight).
    EXPECT_GE(hb.beats(), 2);
  }
  std::lock_guard lock(mu);
  const int at_destruction = seen;
  // Destruction joined the thread: nothing can call the callback any more,
  // and the captured references would dangle if it did (ASan would say so).
  EXPECT_GE(at_destruction, 3);
}

TEST(BusyHeartbeatTest, ShortWorkSendsNoBeatAndStopsAtOnce) {
  std::atomic<int> beats{0};
  const auto start = std::chrono::steady_clock::now();
  {
    BusyHeartbeat hb(std::chrono::hours(1), [&] { ++beats; });
    EXPECT_EQ(hb.beats(), 0);
  }
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(beats.load(), 0);
  // The destructor wakes the wait instead of sitting out the hour.
  EXPECT_LT(took, std::chrono::seconds(5));
}

}  // namespace
}  // namespace fedmf::party
