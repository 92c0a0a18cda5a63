// SIGINT and SIGTERM reach the process's stop flag, which WaitForStop obeys.
#include "common/net/stop_signal.h"

#include <poll.h>

#include <csignal>
#include <thread>

#include "gtest/gtest.h"

namespace fedmf::net {
namespace {

TEST(StopSignalTest, TermAndIntSetTheFlag) {
  InstallStopSignals();
  for (int signal : {SIGTERM, SIGINT}) {
    StopFlag() = false;
    ASSERT_EQ(std::raise(signal), 0);
    EXPECT_TRUE(StopFlag().load()) << "signal " << signal;
  }
  StopFlag() = false;
}

// The descriptor a daemon waits on (instead of polling the flag) becomes
// readable with a signal and with RequestStop, and stays so.
TEST(StopSignalTest, ASignalOrRequestStopMakesTheStopDescriptorReadable) {
  InstallStopSignals();
  ASSERT_GE(StopFd(), 0);
  for (int how : {0, SIGTERM}) {
    StopFlag() = false;
    if (how == 0) {
      RequestStop();
    } else {
      ASSERT_EQ(std::raise(how), 0);
    }
    EXPECT_TRUE(StopFlag().load()) << how;
    pollfd p{StopFd(), POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 1) << how;
    EXPECT_NE(p.revents & POLLIN, 0) << how;
  }
  StopFlag() = false;
}

TEST(StopSignalTest, WaitForStopReturnsOnceAnotherThreadRequestsIt) {
  StopFlag() = false;
  std::thread setter([] { RequestStop(); });
  WaitForStop();
  setter.join();
  EXPECT_TRUE(StopFlag().load());
  StopFlag() = false;
}

TEST(StopSignalTest, WaitForStopReturnsOnceAnotherThreadSetsIt) {
  StopFlag() = false;
  std::thread setter([] { StopFlag() = true; });
  WaitForStop();  // would hang (and the test time out) if the flag were not the one waited on
  setter.join();
  EXPECT_TRUE(StopFlag().load());
  StopFlag() = false;
}

}  // namespace
}  // namespace fedmf::net
