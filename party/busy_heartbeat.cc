#include "party/busy_heartbeat.h"

#include <utility>

#include "absl/time/time.h"

namespace fedmf::party {

BusyHeartbeat::BusyHeartbeat(std::chrono::milliseconds interval, std::function<void()> beat)
    : interval_(interval), beat_(std::move(beat)), thread_([this] { Loop(); }) {}

BusyHeartbeat::~BusyHeartbeat() {
  {
    // Unlocking with stop_ set wakes the loop's Await at once.
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

int BusyHeartbeat::beats() const {
  absl::MutexLock lock(&mu_);
  return beats_;
}

void BusyHeartbeat::Loop() {
  mu_.Lock();
  // A timed wait on the stop flag: the heartbeat's period, not a sleep
  // standing in for synchronization (stop wakes it at once).
  while (!mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::FromChrono(interval_))) {
    mu_.Unlock();
    beat_();  // outside the lock: stop_ can be set while a beat is in flight
    mu_.Lock();
    ++beats_;
  }
  mu_.Unlock();
}

}  // namespace fedmf::party
