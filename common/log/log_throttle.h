// A cap on the log lines one source of rejected peer messages may write:
// at most `per_minute` lines per minute, the rest counted and reported on
// the next line written. A device host sending a million bogus messages once
// wrote 205 MiB of warnings; the operator's status was its lines alone.
// Thread-safe. No gRPC.
#ifndef FEDMF_COMMON_LOG_LOG_THROTTLE_H_
#define FEDMF_COMMON_LOG_LOG_THROTTLE_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fedmf::log {

class LogThrottle {
 public:
  explicit LogThrottle(int64_t per_minute = 30) : per_minute_(per_minute) {}
  void set_per_minute(int64_t n) {
    absl::MutexLock lock(&mu_);
    per_minute_ = n;
  }

  // Whether to write a line at `now`. When true, `*skipped` is set to the
  // lines not written since the last one that was (for "... and N more").
  bool Allow(absl::Time now, int64_t* skipped) {
    absl::MutexLock lock(&mu_);
    if (now - window_start_ >= absl::Minutes(1)) {
      window_start_ = now;
      written_ = 0;
    }
    if (written_ >= per_minute_) {
      ++skipped_;
      return false;
    }
    ++written_;
    *skipped = skipped_;
    skipped_ = 0;
    return true;
  }

 private:
  absl::Mutex mu_;
  int64_t per_minute_ ABSL_GUARDED_BY(mu_);
  absl::Time window_start_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t skipped_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fedmf::log

#endif  // FEDMF_COMMON_LOG_LOG_THROTTLE_H_
