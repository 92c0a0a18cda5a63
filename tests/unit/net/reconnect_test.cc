// WaitBeforeRetry: a wait cut short by the server becoming reachable, the
// whole backoff when the server answered (no spinning on its errors), and
// no wait at all once asked to stop.
#include "common/net/reconnect.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "gtest/gtest.h"

namespace fedmf::net {
namespace {

// A plaintext gRPC server on a loopback port (0: ephemeral); the service
// only makes it a server (a connection is all the tests need).
std::unique_ptr<grpc::Server> StartServer(int* port) {
  static v1::Operator::Service service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", *port), grpc::InsecureServerCredentials(),
                           port);
  builder.RegisterService(&service);
  return builder.BuildAndStart();
}

std::shared_ptr<grpc::Channel> Dial(int port) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                   grpc::InsecureChannelCredentials(), args);
}

TEST(WaitBeforeRetryTest, StopEndsTheWaitAtOnce) {
  auto channel = Dial(1);  // nothing listens on port 1
  std::atomic<bool> stop{true};
  const absl::Time start = absl::Now();
  WaitBeforeRetry(*channel, absl::Seconds(10), stop);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST(WaitBeforeRetryTest, ConnectedChannelWaitsTheWholeBackoff) {
  int port = 0;
  auto server = StartServer(&port);
  ASSERT_NE(server, nullptr);
  auto channel = Dial(port);
  ASSERT_TRUE(
      channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)));
  std::atomic<bool> stop{false};
  const absl::Time start = absl::Now();
  WaitBeforeRetry(*channel, absl::Milliseconds(500), stop);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
  server->Shutdown();
}

// The server appears while the caller waits: the wait ends once connected,
// long before the backoff.
TEST(WaitBeforeRetryTest, UnreachableServerEndsTheWaitOnceItIsUp) {
  int port = 0;
  auto first = StartServer(&port);  // only to get a free port
  ASSERT_NE(first, nullptr);
  first->Shutdown();
  first.reset();
  auto channel = Dial(port);
  EXPECT_FALSE(
      channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::milliseconds(300)));
  std::atomic<bool> stop{false};
  std::atomic<bool> returned{false};
  absl::Time returned_at;
  std::thread waiter([&] {
    WaitBeforeRetry(*channel, absl::Seconds(30), stop);
    returned_at = absl::Now();
    returned = true;
  });
  // Nobody to connect to for another 300 ms: the waiter keeps waiting.
  EXPECT_FALSE(
      channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::milliseconds(300)));
  EXPECT_FALSE(returned) << "the wait ended with the server still away";
  int same_port = port;
  auto server = StartServer(&same_port);
  const absl::Time up = absl::Now();
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(same_port, port);
  waiter.join();
  // gRPC's backoff is at most 2 s here; the poller's 5 s tick must not matter.
  EXPECT_GE(returned_at, up);
  EXPECT_LT(returned_at - up, absl::Seconds(4));
  server->Shutdown();
}

}  // namespace
}  // namespace fedmf::net
