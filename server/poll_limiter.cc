#include "server/poll_limiter.h"

#include "absl/strings/str_cat.h"

namespace fedmf::server {

absl::Status PollLimiter::Acquire(Slot* slot) {
  int32_t n = in_use_.load();
  while (true) {
    if (n >= max_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the server already holds max_concurrent_polls = ", max_, " long-polls",
                       pool_.empty() ? "" : absl::StrCat(" of ", pool_),
                       "; retry later (or raise max_concurrent_polls in the server config)"));
    }
    if (in_use_.compare_exchange_weak(n, n + 1)) break;
  }
  *slot = Slot(this);
  return absl::OkStatus();
}

}  // namespace fedmf::server
