// tools/cluster/process.h: the daemons a demo or a test starts end with it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tools/cluster/process.h"

namespace fedmf::cluster {
namespace {

// "R", "S", "Z"...: the state field of /proc/PID/stat, or "" once the process
// is gone (reaped).
std::string ProcessState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return "";
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return "";
  return line.substr(paren + 2, 1);
}

// A process that spawned a daemon is killed (SIGKILL: no destructor runs, as
// when `fedmf demo --json | head` dies of SIGPIPE): the daemon gets SIGTERM
// and ends instead of running on as an orphan.
TEST(ChildProcessTest, ADaemonEndsWithTheProcessThatStartedIt) {
  const std::string log =
      (std::filesystem::path(::testing::TempDir()) / "child-process-test.log").string();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t starter = fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {
    close(fds[0]);
    auto child = ChildProcess::Spawn({"/bin/sleep", "300"}, log);
    const pid_t pid = child.ok() ? child->pid() : -1;
    if (write(fds[1], &pid, sizeof(pid)) != sizeof(pid)) _exit(2);
    while (true) pause();  // until the test kills it
  }
  close(fds[1]);
  pid_t daemon = -1;
  ASSERT_EQ(read(fds[0], &daemon, sizeof(daemon)), static_cast<ssize_t>(sizeof(daemon)));
  close(fds[0]);
  ASSERT_GT(daemon, 0) << "Spawn failed in the starter process";
  // Alive (running, sleeping, or in the middle of its exec: "D"), not ended.
  const std::string alive = ProcessState(daemon);
  EXPECT_TRUE(alive != "" && alive != "Z" && alive != "X") << "state '" << alive << "'";

  ASSERT_EQ(kill(starter, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(starter, &status, 0), starter);
  // The daemon was reparented; wait (bounded) for it to end: gone, or a
  // zombie its new parent has not reaped yet.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  std::string state = ProcessState(daemon);
  while (state != "" && state != "Z" && state != "X" && absl::Now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling its state
    state = ProcessState(daemon);
  }
  EXPECT_TRUE(state == "" || state == "Z" || state == "X")
      << "the daemon (pid " << daemon << ") outlived its starter by 20 s, state '" << state << "'";
  if (state != "" && state != "Z" && state != "X") kill(daemon, SIGKILL);
}

}  // namespace
}  // namespace fedmf::cluster
