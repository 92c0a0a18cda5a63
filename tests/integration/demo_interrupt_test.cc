// Issue 56 item 6: Ctrl-C (SIGINT), SIGTERM or SIGHUP on `fedmf demo` leaves nothing
// behind: the daemons it started are stopped and its work directory (the
// throw-away CA's key included) is removed, and the demo ends by the signal.
// Each case runs the real CLI as a subprocess with its own TMPDIR, waits for
// a line of its output (never a sleep), signals it and checks what is left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fedmf {
namespace {
namespace fs = std::filesystem;

// Generous: the machine running the suite may be loaded.
constexpr absl::Duration kDeadline = absl::Seconds(300);

// Field 22 of /proc/PID/stat (start time), or "" once the process is gone:
// with the pid it names one process even if the pid is reused.
std::string StartTime(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return "";
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return "";
  std::vector<std::string> f = absl::StrSplit(line.substr(paren + 2), ' ');
  return f.size() > 19 ? f[19] : "";  // fields from 3 on: 22 is index 19
}

pid_t ParentOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return -1;
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return -1;
  std::vector<std::string> f = absl::StrSplit(line.substr(paren + 2), ' ');
  int ppid = -1;
  return f.size() > 1 && absl::SimpleAtoi(f[1], &ppid) ? ppid : -1;
}

// Every process whose parent is `pid`, with its start time.
std::vector<std::pair<pid_t, std::string>> ChildrenOf(pid_t pid) {
  std::vector<std::pair<pid_t, std::string>> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    int p = 0;
    if (!absl::SimpleAtoi(e.path().filename().string(), &p)) continue;
    if (ParentOf(p) == pid) out.emplace_back(p, StartTime(p));
  }
  return out;
}

class Demo {
 public:
  // Starts `fedmf demo ARGS` with TMPDIR=tmpdir; stderr is read here.
  Demo(const std::vector<std::string>& args, const std::string& tmpdir) {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    std::vector<std::string> argv{std::string(FEDMF_BIN_DIR) + "/fedmf", "demo"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env{"TMPDIR=" + tmpdir};
    for (char** e = environ; *e != nullptr; ++e) {
      if (!absl::StartsWith(*e, "TMPDIR=")) env.push_back(*e);
    }
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      const int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, STDOUT_FILENO);
      execve(cargv[0], cargv.data(), cenv.data());
      _exit(127);
    }
    close(fds[1]);
    err_fd_ = fds[0];
  }
  ~Demo() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (err_fd_ >= 0) close(err_fd_);
  }
  pid_t pid() const { return pid_; }
  const std::string& err() const { return err_; }

  // Reads stderr until a line contains `text`; returns that line, or nullopt
  // at the end of the output or the deadline.
  std::optional<std::string> AwaitLine(const std::string& text) {
    const absl::Time deadline = absl::Now() + kDeadline;
    while (true) {
      size_t nl;
      while ((nl = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (absl::StrContains(line, text)) return line;
      }
      const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (ms <= 0) return std::nullopt;
      pollfd p{err_fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 60000))) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(err_fd_, buf, sizeof(buf));
      if (n <= 0) return std::nullopt;
      err_.append(buf, n);
      pending_.append(buf, n);
    }
  }

  // Waits (bounded) for the demo to end; its wait status, or nullopt.
  std::optional<int> AwaitExit() {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd < 0) return std::nullopt;
    pollfd p{pidfd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(kDeadline)));
    close(pidfd);
    if (ready != 1) return std::nullopt;
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return std::nullopt;
    exited_ = true;
    // The rest of its output (the handler's line), for the failure messages.
    char buf[4096];
    ssize_t n;
    while ((n = read(err_fd_, buf, sizeof(buf))) > 0) err_.append(buf, n);
    return status;
  }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  bool exited_ = false;
  std::string err_, pending_;
};

struct Case {
  std::string name;
  std::vector<std::string> args;
  std::string signal_after;  // the output line after which the demo is signalled
  int signal;
  int min_children;  // the daemons running at that point
};

// What a directory holds, one path per line (for the failure messages).
std::string Listing(const fs::path& dir) {
  std::string out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    out += "\n  " + it->path().string();
  }
  return out;
}

class DemoInterruptTest : public ::testing::TestWithParam<Case> {};

TEST_P(DemoInterruptTest, LeavesNoDaemonAndNoWorkDirectory) {
  const Case& c = GetParam();
  const fs::path tmp =
      fs::path(::testing::TempDir()) / absl::StrCat("demo-interrupt-", c.name, "-", getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const absl::Cleanup remove_tmp = [&] {
    std::error_code ec;
    fs::remove_all(tmp, ec);
  };
  Demo demo(c.args, tmp.string());
  ASSERT_GT(demo.pid(), 0);
  const std::optional<std::string> dir_line = demo.AwaitLine("work dir ");
  ASSERT_TRUE(dir_line.has_value()) << demo.err();
  // "demo: work dir /tmp/.../fedmf-cluster-XXXXXX (logs in logs/)..."
  const size_t at = dir_line->find("work dir ") + 9;
  const fs::path work = dir_line->substr(at, dir_line->find(' ', at) - at);
  EXPECT_EQ(work.parent_path(), tmp) << *dir_line;
  if (c.signal_after != "work dir ") {
    ASSERT_TRUE(demo.AwaitLine(c.signal_after).has_value()) << demo.err();
  }
  // The daemons are up and the CA key is on disk.
  EXPECT_TRUE(fs::exists(work / "certs" / "ca.key")) << work;
  const auto children = ChildrenOf(demo.pid());
  EXPECT_GE(static_cast<int>(children.size()), c.min_children) << demo.err();

  ASSERT_EQ(kill(demo.pid(), c.signal), 0);
  const std::optional<int> status = demo.AwaitExit();
  ASSERT_TRUE(status.has_value()) << "the demo did not end within the deadline: " << demo.err();
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == c.signal)
      << "wait status " << *status << "; output:\n"
      << demo.err();
  EXPECT_FALSE(fs::exists(work)) << work << " is left behind: " << Listing(work) << "\noutput:\n"
                                 << demo.err();
  EXPECT_TRUE(fs::is_empty(tmp)) << "something is left in " << tmp;
  for (const auto& [pid, start] : children) {
    EXPECT_NE(StartTime(pid), start) << "daemon " << pid << " outlived the demo";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Settings, DemoInterruptTest,
    ::testing::Values(
        // Ctrl-C in the middle of an HFL job (T large enough that it is still
        // running when the signal arrives).
        Case{"hfl_sigint",
             {"--setting", "hfl", "--T", "20000", "--epsilon", "inf", "--timeout", "600"},
             "round    1/",
             SIGINT,
             4},
        // Right after the work directory exists, while the daemons start.
        Case{"hfl_sigint_at_start",
             {"--setting", "hfl", "--T", "20000", "--epsilon", "inf", "--timeout", "600"},
             "work dir ",
             SIGINT,
             0},
        // SIGHUP (the terminal closed) during Hua S3's iterations: server,
        // aggregator and three device hosts.
        Case{"hua_s3_sighup",
             {"--setting", "hua-s3", "--T", "5000", "--timeout", "600"},
             "iteration    1/",
             SIGHUP,
             5},
        // SIGTERM on the LFL demo's default job, its device hosts running.
        Case{"lfl_sigterm", {"--setting", "lfl", "--timeout", "600"}, "LFL-SGDMF on", SIGTERM, 4}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace fedmf
