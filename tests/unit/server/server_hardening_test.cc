// Issue 55's bounded state without gRPC: the PSI alignment's answers, the
// dashboard's Host and token check.
#include <string>

#include "gtest/gtest.h"
#include "server/dashboard.h"
#include "server/fmf/psi_alignment.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::server {
namespace {

v1::PsiSendRequest List(const std::string& session, int origin, int step, int signer, int points,
                        const std::string& signature = "sig") {
  v1::PsiSendRequest r;
  r.set_session(session);
  v1::PsiList* l = r.mutable_list();
  l->set_origin(origin);
  l->set_step(step);
  l->set_signer(signer);
  l->set_points(std::string(static_cast<size_t>(points) * 32, 'p'));
  l->set_signature(signature);
  return r;
}

TEST(PsiAlignmentTest, QueuedListsComeInAnswersBelowTheMessageBound) {
  auto psi = PsiAlignment::Create({"a", "b"}, "s", /*mailbox_bytes=*/64 << 20,
                                  /*fetch_bytes=*/4 << 20);
  ASSERT_THAT(psi.status(), IsOk());
  // Two honest lists of 131,072 users for party 0: 8 MiB together.
  ASSERT_THAT(psi->Send(1, List("s", 1, 0, 1, 131072)), IsOk());
  ASSERT_THAT(psi->Send(1, List("s", 0, 1, 1, 131072)), IsOk());
  v1::PsiFetchResponse first = psi->Fetch(0);
  ASSERT_EQ(first.lists_size(), 1);
  EXPECT_TRUE(first.more());
  EXPECT_LT(first.ByteSizeLong(), size_t{6} << 20);
  v1::PsiFetchResponse second = psi->Fetch(0);
  ASSERT_EQ(second.lists_size(), 1);
  EXPECT_FALSE(second.more());
  EXPECT_NE(first.lists(0).origin(), second.lists(0).origin());
  EXPECT_TRUE(PsiAlignment::Empty(psi->Fetch(0)));
  // A sender's second list for one origin is refused, not queued.
  EXPECT_THAT(psi->Send(1, List("s", 1, 0, 1, 10, "another")),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(PsiAlignmentTest, TheMailboxIsBoundedPerJob) {
  auto psi = PsiAlignment::Create({"a", "b", "c"}, "s", /*mailbox_bytes=*/1000 * 32,
                                  /*fetch_bytes=*/4 << 20);
  ASSERT_THAT(psi.status(), IsOk());
  ASSERT_THAT(psi->Send(0, List("s", 0, 0, 0, 600)), IsOk());
  const absl::Status over = psi->Send(1, List("s", 1, 0, 1, 600));
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted) << over;
  ASSERT_EQ(psi->Fetch(1).lists_size(), 1);  // party 1 fetches party 0's list
  EXPECT_THAT(psi->Send(1, List("s", 1, 0, 1, 600)), IsOk());
}

TEST(DashboardAccessTest, OnlyItsOwnHostNamesAndTheToken) {
  DashboardAccess loopback{"127.0.0.1", {}, ""};
  auto head = [](std::string host, std::string auth = "") {
    return metrics::HttpRequestHead{std::move(host), std::move(auth)};
  };
  EXPECT_FALSE(DashboardRefusal(loopback, head("127.0.0.1:8080")).has_value());
  EXPECT_FALSE(DashboardRefusal(loopback, head("localhost:8080")).has_value());
  EXPECT_FALSE(DashboardRefusal(loopback, head("[::1]:8080")).has_value());
  // DNS rebinding: the attacker's name, resolving to 127.0.0.1.
  auto rebound = DashboardRefusal(loopback, head("evil.example:8080"));
  ASSERT_TRUE(rebound.has_value());
  EXPECT_EQ(rebound->status, 421);
  EXPECT_TRUE(DashboardRefusal(loopback, head("127.0.0.1.evil.example")).has_value());
  EXPECT_TRUE(DashboardRefusal(loopback, head("")).has_value());

  DashboardAccess remote{"0.0.0.0", {"fedmf.example.org"}, "0123456789abcdef"};
  EXPECT_EQ(DashboardRefusal(remote, head("fedmf.example.org"))->status, 401);
  EXPECT_EQ(DashboardRefusal(remote, head("fedmf.example.org", "Bearer nope"))->status, 401);
  EXPECT_FALSE(DashboardRefusal(remote, head("FEDMF.example.org:443", "Bearer 0123456789abcdef")));
  // Basic: any user, the token as password ("op:0123456789abcdef").
  EXPECT_FALSE(
      DashboardRefusal(remote, head("fedmf.example.org", "Basic b3A6MDEyMzQ1Njc4OWFiY2RlZg==")));
  EXPECT_EQ(DashboardRefusal(remote, head("other.example.org", "Bearer 0123456789abcdef"))->status,
            421);
}

}  // namespace
}  // namespace fedmf::server
