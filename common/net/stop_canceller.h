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
  // Watches `*stop` (not owned; must outlive this) from a thread of its own.
  // With `stop_fd` (readable once a stop is requested: net::StopFd(), not
  // owned) the thread sleeps until it is readable, looking at the flag at
  // least every second; without (-1) it looks every 20 ms, as a flag set
  // from a signal handler wakes nothing. Stops watching when destroyed.
  explicit StopCanceller(const std::atomic<bool>* stop, int stop_fd = -1);
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

  // Watch with a descriptor: poll() on it and on closing_fd_.
  void WatchDescriptor();

  const std::atomic<bool>* stop_;
  const int stop_fd_;     // not owned; -1 = poll the flag
  const int closing_fd_;  // owned eventfd: the destructor wakes WatchDescriptor
  absl::Mutex mu_;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* call_ ABSL_GUARDED_BY(mu_) = nullptr;  // not owned
  std::thread watcher_;
};

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_STOP_CANCELLER_H_
