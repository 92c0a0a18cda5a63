// Waiting between retries of a daemon that dials the server (fedmf-party,
// fedmf-device) when a call failed.
//
// Why not just sleep: while a channel is in TRANSIENT_FAILURE, gRPC fails
// every (fail-fast) call at once and advances its reconnection attempts only
// from its backup poller, every 5 s, unless some thread is waiting on the
// channel. Each step of a connection (TCP, TLS flights, HTTP/2 SETTINGS)
// then waits for a tick, so a handshake takes 10-20 s and may miss the
// attempt's deadline ("Handshake timed out", "timed out before receiving
// SETTINGS frame") again and again: a host started before the server stayed
// unconnected for minutes. Waiting *on the channel* drives the attempt, and
// ends the wait as soon as the server is reachable. Calls stay fail-fast so
// their errors (a TLS or identity problem) still reach the log.
#ifndef FEDMF_COMMON_NET_RECONNECT_H_
#define FEDMF_COMMON_NET_RECONNECT_H_

#include <grpcpp/grpcpp.h>

#include <atomic>

#include "absl/time/time.h"

namespace fedmf::net {

// Waits `backoff` before the caller retries a failed call on `channel`, or
// less: if the channel was not connected, the wait ends once it connects.
// (A connected channel means the server answered with an error: then the
// whole backoff is waited, so the caller does not spin.) Returns early when
// `stop` is set; checks it every 100 ms.
void WaitBeforeRetry(grpc::Channel& channel, absl::Duration backoff, const std::atomic<bool>& stop);

// Waits `backoff` when the server did answer (with a refusal a retry at once
// would meet again): nothing to drive on the channel. Returns early when
// `stop` is set; checks it every 100 ms.
void WaitOut(absl::Duration backoff, const std::atomic<bool>& stop);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_RECONNECT_H_
