#include "server/lifecycle_loop.h"

#include <utility>

namespace fedmf::server {

LifecycleLoop::LifecycleLoop(absl::Mutex* mu, Options options, Step step, Fail fail)
    : mu_(mu),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      tick_(options.tick),
      poll_(options.poll),
      step_(std::move(step)),
      fail_(std::move(fail)) {}

LifecycleLoop::~LifecycleLoop() { Stop(); }

void LifecycleLoop::Start() {
  {
    absl::MutexLock lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { Run(); });
}

void LifecycleLoop::Stop() {
  {
    absl::MutexLock lock(mu_);
    stop_ = true;
  }
  parked_.SignalAll();
  advance_.Signal();
  if (thread_.joinable()) thread_.join();
}

void LifecycleLoop::Notify() {
  parked_.SignalAll();
  advance_.Signal();
}

void LifecycleLoop::NotifyParked() { parked_.SignalAll(); }

void LifecycleLoop::Wake() { advance_.Signal(); }

bool LifecycleLoop::stopping() const {
  mu_->AssertHeld();
  return stop_;
}

bool LifecycleLoop::Park(absl::Time deadline) {
  mu_->AssertHeld();
  if (stop_ || absl::Now() >= deadline) return false;
  parked_.WaitWithDeadline(mu_, deadline);
  return true;
}

bool LifecycleLoop::StepNow() {
  mu_->AssertHeld();
  bool changed = false;
  try {
    changed = step_(clock_->Now());
  } catch (const std::bad_alloc&) {
    // An allocation failure fails the job it happened in, never the daemon.
    fail_("the server ran out of memory for this job");
    changed = true;
  } catch (const std::length_error& e) {
    fail_(absl::StrCat("the server cannot allocate this job's state: ", e.what()));
    changed = true;
  }
  if (changed) parked_.SignalAll();  // the lifecycle itself need not wake
  return changed;
}

void LifecycleLoop::Run() {
  absl::MutexLock lock(mu_);
  while (!stop_) {
    if (StepNow()) continue;
    // Re-check on any event, and every tick for deadlines and liveness.
    advance_.WaitWithTimeout(mu_, tick_);
  }
}

}  // namespace fedmf::server
