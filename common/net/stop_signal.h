// SIGINT and SIGTERM ask a daemon to stop. The handler only sets a flag and
// writes to an eventfd (all a signal handler may safely do); the daemon's
// loops wait on the descriptor or read the flag, and shut down in order.
// One flag per process, shared by every role a process runs.
#ifndef FEDMF_COMMON_NET_STOP_SIGNAL_H_
#define FEDMF_COMMON_NET_STOP_SIGNAL_H_

#include <atomic>

namespace fedmf::net {

// The process's stop flag: set by SIGINT/SIGTERM once InstallStopSignals()
// has run, and by any thread that wants the process to stop (a failed role).
std::atomic<bool>& StopFlag();

// Routes SIGINT and SIGTERM to StopFlag() and StopFd(). Idempotent.
void InstallStopSignals();

// Sets StopFlag() and makes StopFd() readable: what a thread that wants the
// process to stop calls (setting the flag alone is seen only by polling).
void RequestStop();

// A descriptor that becomes readable once a stop is requested (a signal or
// RequestStop), for waiting on a stop without polling the flag; -1 before
// InstallStopSignals(). Owned by this module, never closed.
int StopFd();

// Returns once StopFlag() is set: at once after a signal or RequestStop
// (StopFd), within a second after a direct set of the flag.
void WaitForStop();

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_STOP_SIGNAL_H_
