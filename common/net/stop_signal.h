// SIGINT and SIGTERM ask a daemon to stop. The handler only sets a flag
// (all a signal handler may safely do); the daemon's loops poll it and shut
// down in order. One flag per process, shared by every role a process runs.
#ifndef FEDMF_COMMON_NET_STOP_SIGNAL_H_
#define FEDMF_COMMON_NET_STOP_SIGNAL_H_

#include <atomic>

namespace fedmf::net {

// The process's stop flag: set by SIGINT/SIGTERM once InstallStopSignals()
// has run, and by any thread that wants the process to stop (a failed role).
std::atomic<bool>& StopFlag();

// Routes SIGINT and SIGTERM to StopFlag(). Idempotent.
void InstallStopSignals();

// Returns once StopFlag() is set, looking every 20 ms (a clean stop of a
// whole federation waits for each daemon's look).
void WaitForStop();

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_STOP_SIGNAL_H_
