#include "tools/cluster/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/cluster/exit_cleanup.h"

namespace fedmf::cluster {

namespace {

// What the child needs, prepared before it exists: it shares this process's
// memory until its exec, so it may only make system calls.
struct ChildStart {
  pid_t parent;
  int log_fd;
  int stdin_fd;  // /dev/null, or -1
  char* const* argv;
  const sigset_t* mask;  // the spawning thread's signal mask, for the daemon
};

// Runs on its own stack in the spawner's memory (CLONE_VM | CLONE_VFORK, as
// posix_spawn does): no allocation, no library state, only system calls.
// Not instrumented: ASan's bookkeeping would run on the spawner's memory.
__attribute__((no_sanitize_address)) int ChildMain(void* arg) {
  const ChildStart* c = static_cast<const ChildStart*>(arg);
  // The spawner's signal handlers must not run on its memory here: back to
  // the default action (ignored signals stay ignored, as across an exec).
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction sa;
    if (sigaction(sig, nullptr, &sa) != 0) continue;  // glibc's own, SIGKILL, SIGSTOP
    if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
  }
  // Own process group so a demo's Ctrl-C is handled by the demo.
  setpgid(0, 0);
  // ... and it ends with the demo or test that started it, however that
  // ends (killed, or SIGPIPE from `fedmf demo --json | head`): the daemons
  // get SIGTERM instead of running on, orphaned. If the parent is already
  // gone, there is nobody to serve.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != c->parent) _exit(1);
  dup2(c->log_fd, STDOUT_FILENO);
  dup2(c->log_fd, STDERR_FILENO);
  if (c->stdin_fd >= 0) dup2(c->stdin_fd, STDIN_FILENO);
  sigprocmask(SIG_SETMASK, c->mask, nullptr);
  execv(c->argv[0], c->argv);
  _exit(127);
}

// The child's stack: its exec needs little, 256 KiB is ample.
constexpr size_t kChildStack = size_t{256} << 10;

}  // namespace

absl::StatusOr<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                 const std::string& log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  if (access(argv[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot execute '", argv[0], "': ", strerror(errno),
                                            " (build it first: cmake --build build)"));
  }
  const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open log '", log_path, "': ", strerror(errno)));
  }
  absl::Cleanup close_log = [fd] { close(fd); };
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  absl::Cleanup close_devnull = [devnull] {
    if (devnull >= 0) close(devnull);
  };
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  void* stack = mmap(nullptr, kChildStack, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    return absl::UnavailableError(absl::StrCat("mmap (child stack): ", strerror(errno)));
  }
  absl::Cleanup unmap = [stack] { munmap(stack, kChildStack); };
  // Not fork(): copying this process's page tables (a demo holds its
  // dataset) and the copy-on-write faults after it cost ~15 ms per daemon,
  // 0.1 s of a ten-party demo's start. The spawner waits (CLONE_VFORK) until
  // the child has exec'd; every signal stays blocked until then.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  ChildStart start{getpid(), fd, devnull, args.data(), &old};
  // Tracked (exit_cleanup.h): an interrupted demo stops every child it has.
  int clone_errno = 0;
  absl::StatusOr<pid_t> pid = SpawnTrackedChild([&] {
    const pid_t p = clone(ChildMain, static_cast<char*>(stack) + kChildStack,
                          CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
    clone_errno = errno;
    return p;
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!pid.ok()) return pid.status();
  if (*pid < 0) return absl::UnavailableError(absl::StrCat("clone: ", strerror(clone_errno)));
  return ChildProcess(*pid, log_path);
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(o.pid_), log_path_(std::move(o.log_path_)), status_(o.status_) {
  o.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    Kill();
    pid_ = o.pid_;
    log_path_ = std::move(o.log_path_);
    status_ = o.status_;
    o.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() { Kill(); }

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  const pid_t r = ReapTrackedChild(pid_, &status_, WNOHANG);
  // ECHILD: reaped already, by an interrupted demo's handler (exit_cleanup.h).
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    pid_ = -1;
    return false;
  }
  return true;
}

int ChildProcess::Stop(absl::Duration grace) {
  RequestStop();
  return WaitStopped(absl::Now() + grace);
}

void ChildProcess::RequestStop() {
  if (running()) SignalTrackedChild(pid_, SIGTERM);
}

int ChildProcess::WaitStopped(absl::Time deadline) {
  if (pid_ <= 0) return status_;
  // A pidfd is readable the moment the child ends (Linux >= 5.3); where
  // there is none (older kernels, seccomp), look every 20 ms.
  // (The system call itself: Debian 12's <sys/pidfd.h> lacks extern "C".)
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  absl::Cleanup close_pidfd = [pidfd] {
    if (pidfd >= 0) close(pidfd);
  };
  while (true) {
    if (ReapTrackedChild(pid_, &status_, WNOHANG) == pid_) {
      pid_ = -1;
      return status_;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    const absl::Duration wait = pidfd >= 0 ? left : std::min(left, absl::Milliseconds(20));
    const int ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(wait) + 1, 60000));
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      poll(&p, 1, ms);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
  }
  Kill();
  return status_;
}

void ChildProcess::Kill() {
  if (pid_ <= 0) return;
  if (SignalTrackedChild(pid_, SIGKILL)) ReapTrackedChild(pid_, &status_, 0);
  pid_ = -1;
}

absl::StatusOr<int> WaitForPortFile(const std::string& path, absl::Duration timeout,
                                    ChildProcess* owner) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::ifstream in(path);
    std::string line;
    if (in && std::getline(in, line)) {
      int port = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &port) && port > 0) return port;
    }
    if (owner != nullptr && !owner->running()) {
      return absl::UnavailableError(absl::StrCat("the process exited (code ", owner->exit_code(),
                                                 ") before writing ", path, "; see ",
                                                 owner->log_path()));
    }
    // A look is one failed open(): every 5 ms costs nothing and a daemon's
    // start is seen within 5 ms (a ten-party demo waits for eleven).
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return absl::DeadlineExceededError(absl::StrCat("no port written to ", path));
}

std::string SelfDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace fedmf::cluster
