// StopCanceller: a call blocked in a long wait ends CANCELLED once the stop
// flag is set, and a call started after the stop is cancelled at once.
#include "common/net/stop_canceller.h"

#include <grpcpp/grpcpp.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "gtest/gtest.h"

namespace fedmf::net {
namespace {

// A call that blocks until its deadline: nothing listens on port 1 and the
// call waits for the channel to become ready.
grpc::Status BlockingGetTask(grpc::ClientContext* ctx) {
  auto channel = grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
  auto stub = v1::Coordinator::NewStub(channel);
  ctx->set_wait_for_ready(true);
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  v1::GetTaskRequest req;
  v1::Task task;
  return stub->GetTask(ctx, req, &task);
}

// A blocked call under `canceller`, stopped by `request_stop` 200 ms in.
struct StoppedCall {
  bool returned_before_stop = false;
  grpc::Status status;
  absl::Duration took;  // from the stop to the call's end
};
StoppedCall StopDuringABlockedCall(StopCanceller& canceller,
                                   const std::function<void()>& request_stop) {
  StoppedCall out;
  grpc::ClientContext ctx;
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    StopCanceller::Scope scope(&canceller, &ctx);
    out.status = BlockingGetTask(&ctx);
    returned = true;
  });
  // The call is still waiting (its deadline is 20 s away) until the stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  out.returned_before_stop = returned.load();
  const absl::Time asked = absl::Now();
  request_stop();
  caller.join();
  out.took = absl::Now() - asked;
  return out;
}

TEST(StopCancellerTest, AStopCancelsTheCallInFlight) {
  std::atomic<bool> stop{false};
  StopCanceller canceller(&stop);
  const StoppedCall call = StopDuringABlockedCall(canceller, [&] { stop = true; });
  EXPECT_FALSE(call.returned_before_stop);
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::CANCELLED) << call.status.error_message();
}

// With a stop descriptor (a daemon's net::StopFd()) the watcher sleeps on it
// instead of looking at the flag every 20 ms, and is woken by it: the call
// ends well before the watcher's once-a-second look would have seen the flag.
TEST(StopCancellerTest, WithADescriptorTheStopIsSeenWhenItBecomesReadable) {
  const int fd = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::atomic<bool> stop{false};
  StoppedCall call;
  {
    StopCanceller canceller(&stop, fd);
    call = StopDuringABlockedCall(canceller, [&] {
      stop = true;
      const uint64_t one = 1;
      ASSERT_EQ(write(fd, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    });
  }  // the destructor wakes the watcher through its own descriptor
  close(fd);
  EXPECT_FALSE(call.returned_before_stop);
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::CANCELLED) << call.status.error_message();
  EXPECT_LT(call.took, absl::Milliseconds(700)) << "the watcher did not wake on the descriptor";
}

TEST(StopCancellerTest, ACallAfterTheStopIsCancelledAtOnce) {
  std::atomic<bool> stop{true};
  StopCanceller canceller(&stop);
  // Most likely the watcher has seen the stop before the call begins, so the
  // scope cancels it itself; in either order the call ends CANCELLED.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  grpc::ClientContext ctx;
  StopCanceller::Scope scope(&canceller, &ctx);
  const grpc::Status status = BlockingGetTask(&ctx);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
}

TEST(StopCancellerTest, WithoutAStopTheCallRunsToItsOwnEnd) {
  std::atomic<bool> stop{false};
  StopCanceller canceller(&stop);
  grpc::ClientContext ctx;
  StopCanceller::Scope scope(&canceller, &ctx);
  auto channel = grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
  auto stub = v1::Coordinator::NewStub(channel);
  ctx.set_wait_for_ready(true);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  v1::GetTaskRequest req;
  v1::Task task;
  const grpc::Status status = stub->GetTask(&ctx, req, &task);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
}

}  // namespace
}  // namespace fedmf::net
