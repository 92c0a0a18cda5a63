// Protocol time for the job runners: deadlines, liveness windows and the
// times jobs are handed. Injected so that tests move time forward instead of
// sleeping (as fcp/base/clock.h). How long a call is held in a long poll is
// transport, not protocol: it stays on real time (server/lifecycle_loop.h), so
// a frozen test clock never hangs a call.
#ifndef FEDMF_SERVER_CLOCK_H_
#define FEDMF_SERVER_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fedmf::server {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // The process's wall clock (absl::Now); never null, never destroyed.
  static const Clock* Real();
};

// A clock that moves only when told: for tests. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override;
  void Advance(absl::Duration d);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_CLOCK_H_
