// What a demo leaves behind when it is interrupted: nothing. `fedmf demo`
// installs a handler for SIGINT, SIGTERM and SIGHUP; on one it stops every
// daemon this process started (SIGTERM, then SIGKILL after a grace period),
// removes the work directories registered here (their CA key included), and
// then ends by the same signal. The registry is process-wide because the
// handler must reach every child however deep in a demo the signal lands.
// POSIX only.
#ifndef FEDMF_TOOLS_CLUSTER_EXIT_CLEANUP_H_
#define FEDMF_TOOLS_CLUSTER_EXIT_CLEANUP_H_

#include <sys/types.h>

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fedmf::cluster {

// Runs `spawn` (returns the new child's pid, or < 0 with errno set) and
// registers the child, both under the registry's lock, so that an interrupt
// either sees the child or prevents it. Once an interrupt is being handled,
// refuses (CancelledError) without running `spawn`.
absl::StatusOr<pid_t> SpawnTrackedChild(absl::FunctionRef<pid_t()> spawn);
// waitpid(pid, status, options) under the registry's lock; a reaped child
// leaves the registry. (Under the lock, so that the handler never signals a
// pid that was reaped and perhaps reused.)
pid_t ReapTrackedChild(pid_t pid, int* status, int options);

// A directory to remove if the process is interrupted (a demo's work
// directory).
void RemoveOnInterrupt(const std::string& dir);
// Removes `dir` now and forgets it, under the registry's lock: an owner's
// own removal never runs beside the handler's (two remove_all on one tree
// each fail on what the other took, and left the CA key behind in 4 of 60
// interrupts right after start-up).
void RemoveNowAndForget(const std::string& dir);
// While one exists (a work directory being filled: a CA, configs), the
// handler waits, so that it removes the directory after the writes, not
// before one that recreates it.
class DeferInterrupt {
 public:
  DeferInterrupt();
  ~DeferInterrupt();
  DeferInterrupt(const DeferInterrupt&) = delete;
  DeferInterrupt& operator=(const DeferInterrupt&) = delete;
};

// kill(pid, sig) if `pid` is a tracked child not yet reaped (under the lock:
// never a reused pid).
bool SignalTrackedChild(pid_t pid, int sig);

// Installs the SIGINT / SIGTERM / SIGHUP handler and the thread that does the work
// (a signal handler may only write to a pipe). Idempotent. Children started
// later get the default dispositions back (process.cc's ChildMain).
void InstallInterruptCleanup(absl::Duration grace = absl::Seconds(5));

// For a process that serves until interrupted (`fedmf demo --dashboard`):
// blocks until SIGINT, SIGTERM or SIGHUP and returns the signal; that one signal then
// ends this wait instead of the process, and the caller stops what it
// started itself. Requires InstallInterruptCleanup.
int AwaitInterrupt();

// What the handler does, callable directly (tests): stops every tracked
// child (SIGTERM, SIGKILL after `grace`), refuses any later spawn, removes
// the registered directories.
void StopChildrenAndRemoveDirs(absl::Duration grace);

}  // namespace fedmf::cluster

#endif  // FEDMF_TOOLS_CLUSTER_EXIT_CLEANUP_H_
