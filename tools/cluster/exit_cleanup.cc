#include "tools/cluster/exit_cleanup.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace fedmf::cluster {
namespace {

struct Registry {
  absl::Mutex mu;
  std::set<pid_t> children ABSL_GUARDED_BY(mu);
  std::set<std::string> dirs ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;  // an interrupt is being handled
  // AwaitInterrupt: the next signal is handed to it instead.
  bool awaiting ABSL_GUARDED_BY(mu) = false;
  bool received ABSL_GUARDED_BY(mu) = false;
  int received_signal ABSL_GUARDED_BY(mu) = 0;
};

Registry& Reg() {
  static Registry* r = new Registry;  // never destroyed: the handler may run during exit
  return *r;
}

// DeferInterrupt's readers, the handler's writer.
absl::Mutex& DeferMu() {
  static absl::Mutex* mu = new absl::Mutex;
  return *mu;
}

// The self-pipe: the handler writes the signal's number, the watcher reads it.
int g_pipe[2] = {-1, -1};

void OnSignal(int sig) {
  const int saved = errno;
  const unsigned char b = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = write(g_pipe[1], &b, 1);
  errno = saved;
}

// The process's other threads neither start nor reap a child meanwhile.
void StopLocked(Registry& r, absl::Duration grace) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r.mu) {
  r.stopping = true;
  if (!r.children.empty() || !r.dirs.empty()) {
    std::fprintf(stderr, "interrupted: stopping %zu processes, removing %s\n", r.children.size(),
                 r.dirs.empty() ? "nothing" : r.dirs.begin()->c_str());
  }
  for (pid_t pid : r.children) kill(pid, SIGTERM);
  const absl::Time deadline = absl::Now() + grace;
  while (!r.children.empty()) {
    for (auto it = r.children.begin(); it != r.children.end();) {
      int status = 0;
      const pid_t got = waitpid(*it, &status, WNOHANG);
      it = (got == *it || (got < 0 && errno == ECHILD)) ? r.children.erase(it) : std::next(it);
    }
    if (r.children.empty() || absl::Now() >= deadline) break;
    // A bounded wait for the daemons' own shutdown (they flush their stores).
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (pid_t pid : r.children) {
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  r.children.clear();
  for (const std::string& dir : r.dirs) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  r.dirs.clear();
}

// Not analysed: it takes DeferMu() and never gives it back (the process ends).
void Watch(absl::Duration grace) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  while (true) {
    unsigned char b = 0;
    const ssize_t n = read(g_pipe[0], &b, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return;
    const int sig = b;
    {
      Registry& r = Reg();
      absl::MutexLock l(&r.mu);
      if (r.awaiting) {
        r.awaiting = false;
        r.received = true;
        r.received_signal = sig;
        continue;
      }
    }
    // Both held until the process ends: a thread that would start, reap or
    // exit (the atexit hook below) waits for the signal's end instead.
    DeferMu().Lock();
    Reg().mu.Lock();
    StopLocked(Reg(), grace);
    // End as the signal would have ended the process (a shell sees it).
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    _exit(128 + sig);
  }
}

}  // namespace

absl::StatusOr<pid_t> SpawnTrackedChild(absl::FunctionRef<pid_t()> spawn) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  if (r.stopping) return absl::CancelledError("interrupted: not starting another process");
  const pid_t pid = spawn();
  if (pid > 0) r.children.insert(pid);
  return pid;
}

pid_t ReapTrackedChild(pid_t pid, int* status, int options) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  const pid_t got = waitpid(pid, status, options);
  if (got == pid) r.children.erase(pid);
  return got;
}

bool SignalTrackedChild(pid_t pid, int sig) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  if (!r.children.contains(pid)) return false;
  return kill(pid, sig) == 0;
}

void RemoveOnInterrupt(const std::string& dir) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  r.dirs.insert(dir);
}

void RemoveNowAndForget(const std::string& dir) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  r.dirs.erase(dir);
}

DeferInterrupt::DeferInterrupt() ABSL_NO_THREAD_SAFETY_ANALYSIS { DeferMu().ReaderLock(); }
DeferInterrupt::~DeferInterrupt() ABSL_NO_THREAD_SAFETY_ANALYSIS { DeferMu().ReaderUnlock(); }

void StopChildrenAndRemoveDirs(absl::Duration grace) {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  StopLocked(r, grace);
}

void InstallInterruptCleanup(absl::Duration grace) {
  static std::once_flag once;
  std::call_once(once, [grace] {
    if (pipe2(g_pipe, O_CLOEXEC) != 0) return;  // no handler: the defaults stay
    std::thread(Watch, grace).detach();
    struct sigaction sa = {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    // SIGHUP: the terminal the demo ran in was closed.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
    // A thread that returns from main while the handler works (its calls
    // failed as the daemons stopped) must not end the process with its own
    // exit code first: exit() waits here for the handler's lock.
    std::atexit([] {
      Registry& r = Reg();
      absl::MutexLock l(&r.mu);
    });
  });
}

int AwaitInterrupt() {
  Registry& r = Reg();
  absl::MutexLock l(&r.mu);
  r.received = false;
  r.awaiting = true;
  r.mu.Await(absl::Condition(&r.received));
  return r.received_signal;
}

}  // namespace fedmf::cluster
