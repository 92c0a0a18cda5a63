#include "common/net/stop_canceller.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "absl/time/time.h"

namespace fedmf::net {

StopCanceller::StopCanceller(const std::atomic<bool>* stop, int stop_fd)
    : stop_(stop),
      stop_fd_(stop_fd),
      closing_fd_(stop_fd >= 0 ? eventfd(0, EFD_CLOEXEC) : -1),
      watcher_([this] { Watch(); }) {}

StopCanceller::~StopCanceller() {
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;  // wakes the watcher's wait at once
  }
  if (closing_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(closing_fd_, &one, sizeof(one));
  }
  watcher_.join();
  if (closing_fd_ >= 0) close(closing_fd_);
}

void StopCanceller::WatchDescriptor() {
  // A party's whole life: a wake-up per stop or per second, not 50 a second
  // (each costs ~50 us of CPU on a virtual machine; ten parties on two cores).
  pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {closing_fd_, POLLIN, 0}};
  while (true) {
    poll(fds, 2, 1000);
    absl::MutexLock lock(&mu_);
    if (closing_) return;
    if (stop_->load()) {
      stopped_ = true;
      if (call_ != nullptr) call_->TryCancel();
      return;
    }
    // Readable with the flag cleared again (tests reset it): it stays
    // readable, so from here wait on the closing descriptor alone.
    if ((fds[0].revents & POLLIN) != 0) fds[0].fd = -1;
  }
}

void StopCanceller::Watch() {
  if (closing_fd_ >= 0) {
    WatchDescriptor();
    return;
  }
  absl::MutexLock lock(&mu_);
  // A timed wait on closing_: the flag's polling period, not a sleep in place
  // of synchronization (destruction wakes it at once).
  while (!mu_.AwaitWithTimeout(absl::Condition(&closing_), absl::Milliseconds(20))) {
    if (stop_->load()) {
      stopped_ = true;
      if (call_ != nullptr) call_->TryCancel();
      return;
    }
  }
}

StopCanceller::Scope::Scope(StopCanceller* owner, grpc::ClientContext* ctx) : owner_(owner) {
  absl::MutexLock lock(&owner_->mu_);
  owner_->call_ = ctx;
  if (owner_->stopped_) ctx->TryCancel();
}

StopCanceller::Scope::~Scope() {
  absl::MutexLock lock(&owner_->mu_);
  owner_->call_ = nullptr;
}

}  // namespace fedmf::net
