#include "common/net/reconnect.h"

#include <algorithm>
#include <thread>

namespace fedmf::net {

void WaitBeforeRetry(grpc::Channel& channel, absl::Duration backoff,
                     const std::atomic<bool>& stop) {
  const absl::Time until = absl::Now() + backoff;
  const bool answered = channel.GetState(false) == GRPC_CHANNEL_READY;
  while (!stop) {
    const absl::Time now = absl::Now();
    if (now >= until) return;
    const absl::Time slice = std::min(until, now + absl::Milliseconds(100));
    if (answered) {
      std::this_thread::sleep_for(absl::ToChronoNanoseconds(slice - now));  // backoff, not sync
    } else if (channel.WaitForConnected(absl::ToChronoTime(slice))) {
      return;  // connected: retry now
    }
  }
}

}  // namespace fedmf::net
