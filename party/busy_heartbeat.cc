#include "party/busy_heartbeat.h"

#include <utility>

namespace fedmf::party {

BusyHeartbeat::BusyHeartbeat(std::chrono::milliseconds interval, std::function<void()> beat)
    : interval_(interval), beat_(std::move(beat)), thread_([this] { Loop(); }) {}

BusyHeartbeat::~BusyHeartbeat() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

int BusyHeartbeat::beats() const {
  std::lock_guard lock(mu_);
  return beats_;
}

void BusyHeartbeat::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    // A timed wait on the stop flag: the heartbeat's period, not a sleep
    // standing in for synchronization (stop wakes it at once).
    if (cv_.wait_for(lock, interval_, [this] { return stop_; })) return;
    lock.unlock();
    beat_();
    lock.lock();
    ++beats_;
  }
}

}  // namespace fedmf::party
