// Ends a daemon's in-flight long poll when its stop flag is set. A SIGTERM
// only sets a flag (common/net/stop_signal.h); without this, a party or host
// blocked in GetTask noticed it when the server's poll period ran out (up to
// poll_seconds later), which every clean shutdown then waited for.
#ifndef FEDMF_COMMON_NET_STOP_CANCELLER_H_
#define FEDMF_COMMON_NET_STOP_CANCELLER_H_

#include <grpcpp/client_context.h>

#include <atomic>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace fedmf::net {

class StopCanceller {
 public:
  // Watches `*stop` (not owned; must outlive this) from a thread of its own,
  // looking every 20 ms: the flag is set from a signal handler, which cannot
  // wake anything. Stops watching when destroyed.
  explicit StopCanceller(const std::atomic<bool>* stop);
  ~StopCanceller();
  StopCanceller(const StopCanceller&) = delete;
  StopCanceller& operator=(const StopCanceller&) = delete;

  // While a Scope lives, a stop cancels its call (at once if the stop came
  // first). The context must outlive the scope.
  class Scope {
   public:
    Scope(StopCanceller* owner, grpc::ClientContext* ctx);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StopCanceller* owner_;
  };

 private:
  void Watch();

  const std::atomic<bool>* stop_;
  absl::Mutex mu_;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* call_ ABSL_GUARDED_BY(mu_) = nullptr;  // not owned
  std::thread watcher_;
};

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_STOP_CANCELLER_H_
