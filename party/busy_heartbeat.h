// While a party computes a task (seconds to minutes of local SGD), it is not
// on GetTask, and the server would take its silence for death after the
// liveness window. A BusyHeartbeat, alive for the duration of the work, calls
// `beat` every `interval` on its own thread until it is destroyed.
#ifndef FEDMF_PARTY_BUSY_HEARTBEAT_H_
#define FEDMF_PARTY_BUSY_HEARTBEAT_H_

#include <chrono>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace fedmf::party {

class BusyHeartbeat {
 public:
  // The first beat is one `interval` after construction (work shorter than
  // that sends none). `beat` must be thread-safe w.r.t. the owner's work.
  BusyHeartbeat(std::chrono::milliseconds interval, std::function<void()> beat);
  ~BusyHeartbeat();  // stops and joins; a beat in flight completes first

  BusyHeartbeat(const BusyHeartbeat&) = delete;
  BusyHeartbeat& operator=(const BusyHeartbeat&) = delete;

  int beats() const;  // sent so far (tests, logs)

 private:
  void Loop();

  const std::chrono::milliseconds interval_;
  const std::function<void()> beat_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int beats_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_BUSY_HEARTBEAT_H_
