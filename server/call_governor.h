// Every call fedmf-server serves is counted against its caller and cut off
// on a deadline, so that no certificate holder can hold the server's threads
// (docs/security.md, limits).
//
//  - Pools: a call belongs to the pool of its certificate's role (operators,
//    parties, device hosts; the server and aggregator roles share a small
//    pool). Each pool caps its concurrent calls, and each certificate its own
//    within the pool; beyond either, the handler answers RESOURCE_EXHAUSTED
//    to that caller at once. The pools together stay below gRPC's thread cap
//    (max_threads, checked at config load), so one role's callers, however
//    many calls they open, never starve another role of a thread.
//  - Deadlines: a call that has made no progress (no message read or
//    written, CallProgressed) for `idle`, or that has lasted `max`, is cancelled
//    (ServerContext::TryCancel): a handler blocked in Read or Write returns,
//    its buffers are freed and its slot is released.
//
// Why the synchronous server: the callback API costs the same per round
// (docs/benchmarks.md, "Cross-silo daemons"; measured in
// docs/archive/benchmarks-2026.md, "The network alone" and "Limits against
// hostile peers"), and with authorization before
// the first read and these pools, the threads a held call can pin are
// bounded by configuration rather than by what peers open.
//
// A call is counted from gRPC's PreSynchronousRequest to its
// PostSynchronousRequest (grpc::Server::GlobalCallbacks): that brackets the
// handler AND the final send of its answer, which a peer that stops reading
// can stall as well. The handler learns the verdict through CallAdmitted().
#ifndef FEDMF_SERVER_CALL_GOVERNOR_H_
#define FEDMF_SERVER_CALL_GOVERNOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"

namespace fedmf::server {

struct CallPool {
  int32_t calls = 0;           // concurrent calls of every caller in the pool
  int32_t calls_per_peer = 0;  // ... of one certificate
};

// Configured under `calls:` in the server config (docs/configuration.md).
struct CallLimits {
  CallPool operators{32, 16};
  CallPool parties{128, 8};
  CallPool device_hosts{128, 8};
  CallPool others{8, 4};  // server and aggregator certificates
  // A call that neither received nor sent a message for this long is cut off.
  absl::Duration idle = absl::Seconds(60);
  // No call lasts longer (a slow party's largest upload stays well below).
  absl::Duration max = absl::Seconds(3600);

  int32_t total_calls() const {
    return operators.calls + parties.calls + device_hosts.calls + others.calls;
  }
};

enum class CallerClass { kOperators, kParties, kDeviceHosts, kOthers, kInsecure };
const char* CallerClassName(CallerClass c);

class CallGovernor {
 public:
  struct Counters {
    int64_t admitted = 0;
    int64_t refused = 0;                    // over a pool's or a peer's quota
    int64_t cut_off = 0;                    // cancelled at a deadline
    std::map<std::string, int32_t> in_use;  // by pool name
  };

  // `insecure`: calls carry no certificate; they share one pool (the sum of
  // the others) without per-peer quotas (testing only).
  CallGovernor(CallLimits limits, bool insecure);
  ~CallGovernor();
  CallGovernor(const CallGovernor&) = delete;
  CallGovernor& operator=(const CallGovernor&) = delete;

  // Makes `governor` count every synchronous call of every grpc::Server in
  // this process (null = none again). Call before the first server is built.
  static void Install(CallGovernor* governor);

  // gRPC's global callbacks (Install wires them).
  void Enter(grpc::ServerContext* ctx);
  void Leave(grpc::ServerContext* ctx);

  // OK if `ctx`'s call was admitted; RESOURCE_EXHAUSTED naming the quota and
  // its config key otherwise.
  absl::Status Verdict(const grpc::ServerContextBase& ctx) const;
  // The call moved a message: its idle deadline starts again.
  void Progress(const grpc::ServerContextBase& ctx);
  // The server itself is working for the call (closing an aggregation phase
  // in the handler): no idle deadline until Resumed; calls.max still holds.
  void Working(const grpc::ServerContextBase& ctx, bool working);

  Counters counters() const;
  const CallLimits& limits() const { return limits_; }

 private:
  struct Call {
    grpc::ServerContext* ctx = nullptr;
    CallerClass pool = CallerClass::kOthers;
    std::string peer;  // "role:name", empty when not counted per peer
    std::string who;   // for logs
    absl::Status verdict;
    absl::Time started;
    absl::Time last_progress;
    int working = 0;  // > 0: the server, not the peer, is what the call waits for
    bool cancelled = false;
  };

  const CallPool& PoolOf(CallerClass c) const;
  void Reap();

  const CallLimits limits_;
  const bool insecure_;
  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<const grpc::ServerContextBase*, Call> calls_ ABSL_GUARDED_BY(mu_);
  std::map<CallerClass, int32_t> pool_in_use_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int32_t> peer_in_use_ ABSL_GUARDED_BY(mu_);
  Counters counters_ ABSL_GUARDED_BY(mu_);
  absl::Time last_cut_log_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t cuts_unlogged_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread reaper_;
};

// The installed governor's verdict on `ctx` (OK when none is installed: the
// services' unit tests run without one).
absl::Status CallAdmitted(const grpc::ServerContextBase& ctx);
// The installed governor's Progress (nothing when none is installed).
void CallProgressed(const grpc::ServerContextBase& ctx);

// While alive, the call's idle deadline is suspended: the handler does the
// server's own work (e.g. the last host's submission closes a secure
// aggregation's phase, which may take longer than calls.idle_seconds).
class ServerWorkForCall {
 public:
  explicit ServerWorkForCall(const grpc::ServerContextBase& ctx);
  ~ServerWorkForCall();
  ServerWorkForCall(const ServerWorkForCall&) = delete;
  ServerWorkForCall& operator=(const ServerWorkForCall&) = delete;

 private:
  const grpc::ServerContextBase& ctx_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_CALL_GOVERNOR_H_
