// SIGINT and SIGTERM reach the process's stop flag, which WaitForStop obeys.
#include "common/net/stop_signal.h"

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
