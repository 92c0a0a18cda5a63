// The lifecycle every job runner shares (server/lifecycle_loop.h): steps at
// the injected clock's time, an allocation failure (std::bad_alloc or
// std::length_error) in a step fails the job and the loop goes on, parked
// calls wake on Notify and end on Stop. Synchronized on notifications and the
// runner's mutex, never on sleeps.
#include "server/lifecycle_loop.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "server/clock.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::server {
namespace {

// A runner reduced to what the loop sees: a script of what each step does.
struct FakeRunner {
  enum class Next { kNothing, kChange, kBadAlloc, kLengthError };

  absl::Mutex mu;
  Next next ABSL_GUARDED_BY(mu) = Next::kNothing;
  std::vector<absl::Time> changes ABSL_GUARDED_BY(mu);  // the clock's time of each change
  std::vector<std::string> failures ABSL_GUARDED_BY(mu);
  int steps ABSL_GUARDED_BY(mu) = 0;

  LifecycleLoop::Step Step() {
    return [this](absl::Time now) {
      mu.AssertHeld();
      ++steps;
      const Next what = next;
      next = Next::kNothing;
      switch (what) {
        case Next::kNothing: return false;
        case Next::kChange: changes.push_back(now); return true;
        case Next::kBadAlloc: throw std::bad_alloc();
        case Next::kLengthError: throw std::length_error("vector::reserve");
      }
      return false;
    };
  }
  LifecycleLoop::Fail Fail() {
    return [this](const std::string& why) {
      mu.AssertHeld();
      failures.push_back(why);
    };
  }
};

LifecycleLoop::Options Options(const Clock* clock) {
  LifecycleLoop::Options o;
  o.tick = absl::Seconds(60);  // only Notify wakes the loop in these tests
  o.poll = absl::Seconds(60);
  o.clock = clock;
  return o;
}

// Waits (parked on the loop, woken by its NotifyParked after each change or
// failure) until `done` holds.
template <typename Done>
void AwaitLoop(FakeRunner& r, LifecycleLoop& loop, Done done) {
  absl::MutexLock lock(&r.mu);
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!done() && loop.Park(deadline)) {
  }
}

TEST(LifecycleLoopTest, StepsAtTheInjectedClocksTime) {
  FakeClock clock;
  FakeRunner r;
  LifecycleLoop loop(&r.mu, Options(&clock), r.Step(), r.Fail());
  loop.Start();
  clock.Advance(absl::Minutes(5));
  {
    absl::MutexLock lock(&r.mu);
    r.next = FakeRunner::Next::kChange;
  }
  loop.Notify();
  AwaitLoop(r, loop, [&] {
    r.mu.AssertHeld();
    return !r.changes.empty();
  });
  absl::MutexLock lock(&r.mu);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0], clock.Now());
  EXPECT_EQ(loop.Now(), clock.Now());
}

TEST(LifecycleLoopTest, AnAllocationFailureFailsTheJobAndTheLoopGoesOn) {
  FakeClock clock;
  FakeRunner r;
  LifecycleLoop loop(&r.mu, Options(&clock), r.Step(), r.Fail());
  loop.Start();
  size_t failed = 0;
  for (FakeRunner::Next what : {FakeRunner::Next::kBadAlloc, FakeRunner::Next::kLengthError}) {
    {
      absl::MutexLock lock(&r.mu);
      r.next = what;
    }
    loop.Notify();
    ++failed;
    AwaitLoop(r, loop, [&] {
      r.mu.AssertHeld();
      return r.failures.size() == failed;
    });
  }
  {
    absl::MutexLock lock(&r.mu);
    ASSERT_EQ(r.failures.size(), 2u);
    EXPECT_EQ(r.failures[0], "the server ran out of memory for this job");
    EXPECT_EQ(r.failures[1], "the server cannot allocate this job's state: vector::reserve");
    r.next = FakeRunner::Next::kChange;
  }
  loop.Notify();  // still stepping
  AwaitLoop(r, loop, [&] {
    r.mu.AssertHeld();
    return !r.changes.empty();
  });
  absl::MutexLock lock(&r.mu);
  EXPECT_EQ(r.changes.size(), 1u);
}

TEST(LifecycleLoopTest, StepNowGuardsTheCallingThreadToo) {
  FakeRunner r;
  LifecycleLoop loop(&r.mu, Options(nullptr), r.Step(), r.Fail());
  absl::MutexLock lock(&r.mu);
  r.next = FakeRunner::Next::kLengthError;
  EXPECT_TRUE(loop.StepNow());
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_FALSE(loop.StepNow());  // nothing more to do
}

TEST(LifecycleLoopTest, GuardAllocationTurnsBothFailuresIntoResourceExhausted) {
  absl::Status bad_alloc = LifecycleLoop::GuardAllocation(
      "creating it", []() -> absl::Status { throw std::bad_alloc(); });
  EXPECT_EQ(bad_alloc.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(bad_alloc.message(), "the server ran out of memory creating it");
  absl::StatusOr<int> length = LifecycleLoop::GuardAllocation(
      "creating it", []() -> absl::StatusOr<int> { throw std::length_error("too long"); });
  EXPECT_EQ(length.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(length.status().message(), "the server cannot allocate creating it: too long");
  absl::StatusOr<int> fine =
      LifecycleLoop::GuardAllocation("creating it", []() -> absl::StatusOr<int> { return 3; });
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(*fine, 3);
}

TEST(LifecycleLoopTest, StopEndsAParkedCall) {
  FakeRunner r;
  LifecycleLoop loop(&r.mu, Options(nullptr), r.Step(), r.Fail());
  loop.Start();
  absl::Notification parked, returned;
  std::thread call([&] {
    absl::MutexLock lock(&r.mu);
    const absl::Time deadline = loop.PollDeadline();  // 60 s away
    parked.Notify();
    while (loop.Park(deadline)) {
    }
    EXPECT_TRUE(loop.stopping());
    returned.Notify();
  });
  parked.WaitForNotification();
  loop.Stop();
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "a parked call outlived Stop()";
  call.join();
}

}  // namespace
}  // namespace fedmf::server
