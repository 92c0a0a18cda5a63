// Process-wide settings of absl::Mutex's run-time checks for fedmf's programs.
#ifndef FEDMF_COMMON_BASE_MUTEX_CHECKS_H_
#define FEDMF_COMMON_BASE_MUTEX_CHECKS_H_

#include "absl/synchronization/mutex.h"

namespace fedmf::base {

// absl::Mutex tracks the order locks are taken in, to report a possible
// deadlock, unless abseil itself was compiled with NDEBUG, and Debian 12's
// libabsl was not: every Lock and Unlock of the daemons went through the
// global cycle graph (GraphCycles, DeadlockCheck, GetGraphId: 1 % of the
// parties' and 2.5 % of fedmf-server's CPU in the HFL demo's rounds, where
// gRPC's threads lock and wait a few hundred times per round;
// docs/archive/benchmarks-2026.md). A program built with NDEBUG turns the tracking off,
// as abseil's own release default does; the order of locks is checked at
// compile time instead (the thread-safety annotations, clang's
// -Wthread-safety), and unit tests, which never call this, keep the
// run-time check. Call at the start of main(), before any thread exists.
inline void ConfigureMutexChecks() {
#ifdef NDEBUG
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace fedmf::base

#endif  // FEDMF_COMMON_BASE_MUTEX_CHECKS_H_
