#include "common/net/stop_signal.h"

#include <chrono>
#include <csignal>
#include <thread>

namespace fedmf::net {
namespace {

// A handler may touch only lock-free atomics.
static_assert(std::atomic<bool>::is_always_lock_free);
std::atomic<bool> g_stop{false};

void OnStopSignal(int) { g_stop.store(true); }

}  // namespace

std::atomic<bool>& StopFlag() { return g_stop; }

void InstallStopSignals() {
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

void WaitForStop() {
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace fedmf::net
