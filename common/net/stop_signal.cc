#include "common/net/stop_signal.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <thread>

namespace fedmf::net {
namespace {

// A handler may touch only lock-free atomics (and make system calls).
static_assert(std::atomic<bool>::is_always_lock_free);
std::atomic<bool> g_stop{false};
std::atomic<int> g_stop_fd{-1};

// Makes the eventfd readable; write() is async-signal-safe. Never drained:
// once readable it stays so, as the flag stays set.
void WakeStopFd() {
  const int fd = g_stop_fd.load();
  if (fd < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(fd, &one, sizeof(one));
}

void OnStopSignal(int) {
  g_stop.store(true);
  WakeStopFd();
}

}  // namespace

std::atomic<bool>& StopFlag() { return g_stop; }

int StopFd() { return g_stop_fd.load(); }

void RequestStop() {
  g_stop.store(true);
  WakeStopFd();
}

void InstallStopSignals() {
  // The descriptor exists before a handler can run.
  static std::once_flag once;
  std::call_once(once, [] { g_stop_fd.store(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)); });
  if (g_stop.load()) WakeStopFd();  // requested before the descriptor existed
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

void WaitForStop() {
  while (!g_stop.load()) {
    const int fd = g_stop_fd.load();
    if (fd >= 0) {
      // Woken by a signal or RequestStop at once; a thread that sets the
      // flag directly is seen within the timeout.
      pollfd p{fd, POLLIN, 0};
      // Readable with the flag cleared again (tests reset it): no spinning.
      if (poll(&p, 1, 1000) > 0 && !g_stop.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace fedmf::net
