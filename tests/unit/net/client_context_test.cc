// The retry of gRPC's own thread-quota refusal: only that refusal is retried,
// a bounded number of times; fedmf-server's own quota refusals are not.
#include "common/net/client_context.h"

#include "gtest/gtest.h"

namespace fedmf::net {
namespace {

const grpc::Status kThreadQuota(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                "Server Threadpool Exhausted");

TEST(ThreadQuotaRetryTest, OnlyGrpcsThreadQuotaRefusalIsTransient) {
  EXPECT_TRUE(IsThreadQuotaRefusal(kThreadQuota));
  EXPECT_FALSE(IsThreadQuotaRefusal(grpc::Status::OK));
  EXPECT_FALSE(IsThreadQuotaRefusal(
      grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "too many calls from 'party-9'")));
  EXPECT_FALSE(IsThreadQuotaRefusal(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "Server Threadpool Exhausted")));
}

TEST(ThreadQuotaRetryTest, RetriesTheRefusalUntilTheCallFindsAThread) {
  int calls = 0;
  const grpc::Status s =
      RetryThreadQuotaRefusals([&] { return ++calls < 3 ? kThreadQuota : grpc::Status::OK; });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(calls, 3);
}

TEST(ThreadQuotaRetryTest, OtherFailuresAreNotRetriedAndRetriesAreBounded) {
  int calls = 0;
  const grpc::Status quota(grpc::StatusCode::RESOURCE_EXHAUSTED, "over this caller's quota");
  EXPECT_EQ(RetryThreadQuotaRefusals([&] {
              ++calls;
              return quota;
            }).error_message(),
            quota.error_message());
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_TRUE(IsThreadQuotaRefusal(RetryThreadQuotaRefusals(
      [&] {
        ++calls;
        return kThreadQuota;
      },
      3)));
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace fedmf::net
