#include "common/net/stop_canceller.h"

#include "absl/time/time.h"

namespace fedmf::net {

StopCanceller::StopCanceller(const std::atomic<bool>* stop)
    : stop_(stop), watcher_([this] { Watch(); }) {}

StopCanceller::~StopCanceller() {
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;  // wakes the watcher's wait at once
  }
  watcher_.join();
}

void StopCanceller::Watch() {
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
