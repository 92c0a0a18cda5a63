// A cap on concurrent long-polls of one pool of callers (fedmf-server keeps
// one each for operators, parties and device hosts: GetJob watches, GetTask,
// GetDeviceTask and Hua Poll never take each other's slots). A sync
// gRPC server spends one thread per open call; a long-poll holds it for the
// poll length. Beyond the cap the call is refused at once with
// RESOURCE_EXHAUSTED (clients retry with backoff) so the threads left serve
// uploads and replies. Thread-safe, no gRPC.
#ifndef FEDMF_SERVER_POLL_LIMITER_H_
#define FEDMF_SERVER_POLL_LIMITER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"

namespace fedmf::server {

class PollLimiter {
 public:
  // `pool` names the callers in the refusal ("parties"); may be empty.
  explicit PollLimiter(int32_t max_concurrent, std::string pool = "")
      : max_(max_concurrent), pool_(std::move(pool)) {}
  PollLimiter(const PollLimiter&) = delete;
  PollLimiter& operator=(const PollLimiter&) = delete;

  // Holds one slot while alive (empty if it was refused).
  class Slot {
   public:
    Slot() = default;
    explicit Slot(PollLimiter* owner) : owner_(owner) {}
    Slot(Slot&& o) noexcept : owner_(o.owner_) { o.owner_ = nullptr; }
    Slot& operator=(Slot&& o) noexcept {
      if (this != &o) {
        Release();
        owner_ = o.owner_;
        o.owner_ = nullptr;
      }
      return *this;
    }
    ~Slot() { Release(); }

   private:
    void Release() {
      if (owner_ != nullptr) owner_->in_use_.fetch_sub(1);
      owner_ = nullptr;
    }
    PollLimiter* owner_ = nullptr;
  };

  // A slot, or RESOURCE_EXHAUSTED naming the cap and the config key.
  absl::Status Acquire(Slot* slot);
  int32_t in_use() const { return in_use_.load(); }
  int32_t max() const { return max_; }

 private:
  const int32_t max_;
  const std::string pool_;
  std::atomic<int32_t> in_use_{0};
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_POLL_LIMITER_H_
