#include "tools/cluster/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace fedmf::cli {

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
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    // Child: own process group so a demo's Ctrl-C is handled by the demo.
    setpgid(0, 0);
    // ... and it ends with the demo or test that started it, however that
    // ends (killed, or SIGPIPE from `fedmf demo --json | head`): the daemons
    // get SIGTERM instead of running on, orphaned. If the parent is already
    // gone, there is nobody to serve.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fd);
  return ChildProcess(pid, log_path);
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
  const pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) {
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
  if (running()) kill(pid_, SIGTERM);
}

int ChildProcess::WaitStopped(absl::Time deadline) {
  if (pid_ <= 0) return status_;
  while (absl::Now() < deadline) {
    if (waitpid(pid_, &status_, WNOHANG) == pid_) {
      pid_ = -1;
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill();
  return status_;
}

void ChildProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, &status_, 0);
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
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat("no port written to ", path));
}

std::string SelfDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace fedmf::cli
