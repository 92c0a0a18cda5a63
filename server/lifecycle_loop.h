// The one lifecycle every job runner shares (cross-silo FMF, LFL, Hua S3):
// a thread that steps the active job under the runner's mutex, waits for
// news or the next tick, and turns an allocation failure into the failure
// of that job instead of the daemon's; the long poll of the calls parked
// for news; and the runner's protocol clock (server/clock.h).
//
// The runner keeps its mutex and its state; the loop only knows what to
// call. Two condition variables, so that a state change wakes every parked
// call while the lifecycle thread wakes only for what it may act on:
//   Notify()        - something changed: parked calls and the lifecycle look again;
//   NotifyParked()  - the lifecycle itself changed state: only parked calls look;
//   Wake()          - an input only the lifecycle acts on (an upload): only it looks.
#ifndef FEDMF_SERVER_LIFECYCLE_LOOP_H_
#define FEDMF_SERVER_LIFECYCLE_LOOP_H_

#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/clock.h"

namespace fedmf::server {

class LifecycleLoop {
 public:
  struct Options {
    absl::Duration tick = absl::Milliseconds(200);  // deadlines re-checked at least this often
    absl::Duration poll = absl::Seconds(2);         // a parked call's longest wait (real time)
    const Clock* clock = nullptr;                   // null = Clock::Real()
  };
  // Called with *mu held. `step` advances the active job once at `now` and
  // says whether it changed state (then the loop steps again at once);
  // `fail` fails the active job, if any, with `why` after an allocation
  // failure (std::bad_alloc or std::length_error) escaped `step`.
  using Step = std::function<bool(absl::Time now)>;
  using Fail = std::function<void(const std::string& why)>;

  // `mu` is the runner's mutex (not owned; outlives this).
  LifecycleLoop(absl::Mutex* mu, Options options, Step step, Fail fail);
  ~LifecycleLoop();  // Stop()
  LifecycleLoop(const LifecycleLoop&) = delete;
  LifecycleLoop& operator=(const LifecycleLoop&) = delete;

  void Start();  // starts the thread; *mu not held
  void Stop();   // ends parked calls and the thread, joins it; *mu not held

  // The runner's protocol time.
  absl::Time Now() const { return clock_->Now(); }
  const Clock* clock() const { return clock_; }

  // Any thread, with or without *mu.
  void Notify();
  void NotifyParked();
  void Wake();  // only the lifecycle looks again (an input only it acts on)

  // The long poll, *mu held: the real-time deadline of a call parked now.
  absl::Time PollDeadline() const { return absl::Now() + poll_; }
  // *mu held. One step on the calling thread, guarded as on the lifecycle
  // thread (for inputs that let the job move at once, e.g. a host's last
  // submission); returns whether the job changed state.
  bool StepNow();
  // *mu held. Whether Stop() was called.
  bool stopping() const;
  // *mu held. False when the call should answer now (stopping, or past
  // `deadline` on real time); otherwise waits until a Notify*, Stop or
  // `deadline` and returns true: look again. The wait releases *mu.
  bool Park(absl::Time deadline);

  // Runs `make` (building or restoring a job's state) and turns an
  // allocation failure into ResourceExhausted "the server ran out of memory
  // <what>" (or "cannot allocate <what>: ..."). F returns absl::Status or
  // absl::StatusOr<T>.
  template <typename F>
  static auto GuardAllocation(absl::string_view what, F&& make) -> decltype(make()) {
    try {
      return make();
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(absl::StrCat("the server ran out of memory ", what));
    } catch (const std::length_error& e) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the server cannot allocate ", what, ": ", e.what()));
    }
  }

 private:
  void Run();

  absl::Mutex* const mu_;
  const Clock* const clock_;
  const absl::Duration tick_;
  const absl::Duration poll_;
  const Step step_;
  const Fail fail_;
  absl::CondVar parked_;   // calls waiting for news
  absl::CondVar advance_;  // the lifecycle thread waiting for news or its tick
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_LIFECYCLE_LOOP_H_
