// The call governor on an in-process gRPC server (no TLS: one pool for
// every caller): a call beyond the pool is refused with RESOURCE_EXHAUSTED
// by its handler at once, a call that makes no progress for calls.idle is
// cancelled, and its slot serves the next caller.
#include "server/call_governor.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "server/fmf/coordinator_service.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;

namespace fedmf::server {
namespace {

TEST(CallGovernorTest, RefusesBeyondThePoolAndCutsOffStalledCalls) {
  const fedmf::testing::ScopedTempDir dir("fedmf-gov-");
  {
    auto store = ServerStore::Open(dir.Path("s.db"));
    ASSERT_THAT(store, IsOk());
    JobCoordinator coordinator(store->get(), CoordinatorOptions{});
    TrafficCounters traffic;
    CoordinatorService service(&coordinator, /*insecure=*/true, 1024, &traffic);
    CallLimits limits;
    limits.operators = {1, 1};
    limits.parties = {1, 1};
    limits.device_hosts = {1, 1};
    limits.others = {1, 1};  // insecure: one pool of 4
    limits.idle = absl::Seconds(1);
    CallGovernor governor(limits, /*insecure=*/true);
    CallGovernor::Install(&governor);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    ASSERT_NE(server, nullptr);
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                       grpc::InsecureChannelCredentials());
    auto stub = v1::Coordinator::NewStub(channel);

    // Four uploads that never send a chunk: each handler blocks in Read.
    constexpr int kPool = 4;
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<v1::UploadResponse> responses(kPool + 2);
    std::vector<std::unique_ptr<grpc::ClientWriter<v1::MatrixChunk>>> held;
    for (int i = 0; i < kPool; ++i) {
      contexts.push_back(std::make_unique<grpc::ClientContext>());
      contexts.back()->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      held.push_back(stub->UploadUpdate(contexts.back().get(), &responses[i]));
    }
    // Wait until the server has admitted all four (no sleep: its counters).
    for (int spin = 0; spin < 6000 && governor.counters().admitted < kPool; ++spin) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    ASSERT_EQ(governor.counters().admitted, kPool);
    // The fifth is refused at once, by its handler.
    grpc::ClientContext fifth_ctx;
    auto fifth = stub->UploadUpdate(&fifth_ctx, &responses[kPool]);
    const grpc::Status refused = fifth->Finish();
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << refused.error_message();
    EXPECT_NE(refused.error_message().find("calls."), std::string::npos) << refused.error_message();
    // The four stalled ones are cut off after calls.idle without progress.
    for (auto& w : held) {
      const grpc::Status cut = w->Finish();
      EXPECT_EQ(cut.error_code(), grpc::StatusCode::CANCELLED) << cut.error_message();
    }
    EXPECT_GE(governor.counters().cut_off, kPool);
    // Their slots are free: the next upload is served (and refused as empty).
    grpc::ClientContext next_ctx;
    auto next = stub->UploadUpdate(&next_ctx, &responses[kPool + 1]);
    next->WritesDone();
    const grpc::Status empty = next->Finish();
    EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << empty.error_message();
    server->Shutdown();
    CallGovernor::Install(nullptr);
  }
}

}  // namespace
}  // namespace fedmf::server
