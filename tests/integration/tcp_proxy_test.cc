// The fault-injecting proxy itself: bytes cross it both ways; ResetAll makes
// both ends see a connection reset (not an orderly close); with no target it
// refuses (an RST) or holds (no answer) as asked. The drills rely on each.
#include "tests/integration/tcp_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

int Dial(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0) << strerror(errno);
  return fd;
}

// recv with a deadline: bytes read, 0 at EOF, -errno on an error, or
// -ETIMEDOUT when nothing came.
int RecvWithin(int fd, char* buf, size_t n, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) == 0) return -ETIMEDOUT;
  const ssize_t r = recv(fd, buf, n, 0);
  return r < 0 ? -errno : static_cast<int>(r);
}

// A one-connection echo server on an ephemeral loopback port.
class Echo {
 public:
  Echo() {
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    EXPECT_EQ(bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(listen_, 4), 0);
    getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      pollfd p{listen_, POLLIN, 0};
      if (poll(&p, 1, 10000) != 1) return;  // nobody came (the test failed early)
      const int fd = accept(listen_, nullptr, nullptr);
      char buf[256];
      for (;;) {
        const int r = RecvWithin(fd, buf, sizeof(buf), 10000);
        if (r <= 0) {
          last_error_ = r;
          break;
        }
        send(fd, buf, static_cast<size_t>(r), MSG_NOSIGNAL);
      }
      close(fd);
    });
  }
  ~Echo() {
    if (thread_.joinable()) thread_.join();
    close(listen_);
  }
  int port() const { return port_; }
  // Waits for the connection to end: 0 (EOF) or -errno.
  int WaitEnd() {
    thread_.join();
    return last_error_;
  }

 private:
  int listen_ = -1;
  int port_ = 0;
  int last_error_ = 1;
  std::thread thread_;
};

TEST(TcpProxyTest, ForwardsBothWaysAndResetAllResetsBothEnds) {
  Echo echo;
  auto proxy = TcpProxy::Start(echo.port());
  ASSERT_THAT(proxy, IsOk());
  const int fd = Dial((*proxy)->port());
  ASSERT_EQ(send(fd, "ping", 4, 0), 4);
  char buf[16];
  ASSERT_EQ(RecvWithin(fd, buf, sizeof(buf), 5000), 4);
  EXPECT_EQ(std::string(buf, 4), "ping");
  EXPECT_EQ((*proxy)->accepted(), 1);
  EXPECT_EQ((*proxy)->forwarded(), 1);

  EXPECT_EQ((*proxy)->ResetAll(), 1);
  EXPECT_EQ((*proxy)->resets(), 1);
  EXPECT_EQ(RecvWithin(fd, buf, sizeof(buf), 5000), -ECONNRESET);
  EXPECT_EQ(echo.WaitEnd(), -ECONNRESET);
  close(fd);
}

TEST(TcpProxyTest, WithoutATargetRefusesWithAReset) {
  auto proxy = TcpProxy::Start();
  ASSERT_THAT(proxy, IsOk());
  const int fd = Dial((*proxy)->port());
  char buf[16];
  EXPECT_EQ(RecvWithin(fd, buf, sizeof(buf), 5000), -ECONNRESET);
  EXPECT_EQ((*proxy)->refused(), 1);
  EXPECT_EQ((*proxy)->forwarded(), 0);
  close(fd);
}

TEST(TcpProxyTest, HoldKeepsConnectionsUnansweredUntilReset) {
  auto proxy = TcpProxy::Start();
  ASSERT_THAT(proxy, IsOk());
  (*proxy)->Hold();
  const int fd = Dial((*proxy)->port());
  ASSERT_EQ(send(fd, "hello", 5, 0), 5);
  char buf[16];
  EXPECT_EQ(RecvWithin(fd, buf, sizeof(buf), 300), -ETIMEDOUT);
  // Accepted and counted as held (the count follows the accept).
  for (int k = 0; k < 100 && (*proxy)->held() == 0; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval
  }
  EXPECT_EQ((*proxy)->held(), 1);
  EXPECT_EQ((*proxy)->ResetAll(), 1);
  EXPECT_EQ(RecvWithin(fd, buf, sizeof(buf), 5000), -ECONNRESET);
  close(fd);
}

}  // namespace
}  // namespace fedmf::it
