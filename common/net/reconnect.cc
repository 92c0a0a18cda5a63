#include "common/net/reconnect.h"

#include <algorithm>
#include <thread>

namespace fedmf::net {

void WaitBeforeRetry(grpc::Channel& channel, absl::Duration backoff,
                     const std::atomic<bool>& stop) {
  if (channel.GetState(false) == GRPC_CHANNEL_READY) {
    WaitOut(backoff, stop);
    return;
  }
  const absl::Time until = absl::Now() + backoff;
  while (!stop) {
    const absl::Time now = absl::Now();
    if (now >= until) return;
    const absl::Time slice = std::min(until, now + absl::Milliseconds(100));
    if (channel.WaitForConnected(absl::ToChronoTime(slice))) return;  // connected: retry now
  }
}

void WaitOut(absl::Duration backoff, const std::atomic<bool>& stop) {
  const absl::Time until = absl::Now() + backoff;
  while (!stop) {
    const absl::Time now = absl::Now();
    if (now >= until) return;
    const absl::Time slice = std::min(until, now + absl::Milliseconds(100));
    std::this_thread::sleep_for(absl::ToChronoNanoseconds(slice - now));  // backoff, not sync
  }
}

}  // namespace fedmf::net
