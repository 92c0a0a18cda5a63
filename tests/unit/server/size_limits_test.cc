// The server's size bounds (server/size_limits.h) and its long-poll cap
// (server/poll_limiter.h): pure functions, asserted on codes and messages.
#include "server/size_limits.h"

#include <string>

#include "gtest/gtest.h"
#include "server/poll_limiter.h"
#include "server/server_config.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::server {
namespace {

bool Has(const absl::Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

v1::OfferReply Reply(int32_t users, int32_t items, int32_t gu, int32_t gi) {
  v1::OfferReply r;
  r.set_accept(true);
  r.set_users(users);
  r.set_items(items);
  r.set_global_users(gu);
  r.set_global_items(gi);
  return r;
}

TEST(SizeLimitsTest, OfferReplyOverABoundNamesTheFieldTheLimitAndTheFix) {
  const SizeLimits l;  // defaults: max_items = 1000000
  const absl::Status s = CheckOfferReply(Reply(10, 2147483647, 10, 2147483647), false, 8, l);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "OfferReply.items = 2147483647 exceeds the server's max_items = 1000000"))
      << s;
  EXPECT_TRUE(Has(s, "limits.max_items in the server config")) << s;
  const absl::Status u = CheckOfferReply(Reply(2147483647, 5, 2147483647, 5), true, 8, l);
  EXPECT_TRUE(Has(u, "OfferReply.users = 2147483647 exceeds the server's max_users = 10000000"))
      << u;
  const absl::Status g = CheckOfferReply(Reply(5, 5, 5, 1000001), false, 8, l);
  EXPECT_TRUE(Has(g, "OfferReply.global_items = 1000001 exceeds")) << g;
  const absl::Status neg = CheckOfferReply(Reply(-1, 5, 5, 5), false, 8, l);
  EXPECT_EQ(neg.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(neg, "OfferReply.users = -1 is negative")) << neg;
}

TEST(SizeLimitsTest, TheSharedMatrixIsBoundedAsAProduct) {
  SizeLimits l;
  l.max_matrix_values = 1000;
  // HFL: global_items x dim; VFL: global_users x dim.
  EXPECT_THAT(CheckOfferReply(Reply(10, 100, 10, 100), false, 10, l), IsOk());
  const absl::Status h = CheckOfferReply(Reply(10, 101, 10, 101), false, 10, l);
  EXPECT_EQ(h.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(h,
                  "OfferReply.global_items x JobSpec.dim = 101 x 10 = 1010 values exceeds "
                  "the server's max_matrix_values = 1000"))
      << h;
  EXPECT_THAT(CheckOfferReply(Reply(500, 101, 500, 101), true, 2, l), IsOk());
  const absl::Status v = CheckOfferReply(Reply(501, 101, 501, 101), true, 2, l);
  EXPECT_TRUE(Has(v, "OfferReply.global_users x JobSpec.dim = 501 x 2")) << v;
}

TEST(SizeLimitsTest, JobSpecSizesOfEverySetting) {
  SizeLimits l;
  l.max_dim = 64;
  l.max_devices = 100;
  l.max_items = 1000;
  l.max_parties = 3;
  v1::JobSpec s;
  s.set_setting(v1::SETTING_HFL);
  s.set_dim(64);
  s.add_roster("a");
  EXPECT_THAT(CheckJobSpecSizes(s, l), IsOk());
  s.set_dim(65);
  EXPECT_TRUE(Has(CheckJobSpecSizes(s, l), "JobSpec.dim = 65 exceeds the server's max_dim = 64"));
  s.set_dim(8);
  for (const char* p : {"b", "c", "d"}) s.add_roster(p);
  EXPECT_TRUE(Has(CheckJobSpecSizes(s, l), "JobSpec.roster (parties) = 4 exceeds"));
  s.clear_roster();
  s.set_setting(v1::SETTING_LFL);
  s.mutable_lfl()->set_num_items(1001);
  EXPECT_TRUE(Has(CheckJobSpecSizes(s, l), "JobSpec.lfl.num_items = 1001 exceeds"));
  s.mutable_lfl()->set_num_items(1000);
  v1::DeviceGrant* g = s.mutable_lfl()->add_grants();
  g->set_count(60);
  *s.mutable_lfl()->add_grants() = *g;
  EXPECT_TRUE(Has(CheckJobSpecSizes(s, l),
                  "JobSpec.lfl.grants (devices) = 120 exceeds the server's max_devices = 100"));
  s.set_setting(v1::SETTING_HUA_S3);
  s.mutable_hua()->set_num_items(5000);
  EXPECT_TRUE(Has(CheckJobSpecSizes(s, l), "JobSpec.hua.num_items = 5000 exceeds"));
  s.mutable_hua()->set_num_items(10);
  s.mutable_hua()->set_expected_users(2147483647);
  EXPECT_TRUE(Has(CheckJobSpecSizes(s, l), "JobSpec.hua.expected_users = 2147483647 exceeds"));
}

TEST(SizeLimitsTest, HostHelloAndTheLimitsThemselves) {
  SizeLimits l;
  l.max_devices = 2;
  v1::HostHello h;
  h.add_devices(1);
  h.add_devices(2);
  EXPECT_THAT(CheckHostHello(h, l), IsOk());
  h.add_devices(3);
  EXPECT_TRUE(Has(CheckHostHello(h, l), "HostHello.devices = 3 exceeds"));
  EXPECT_THAT(ValidateSizeLimits(SizeLimits{}), IsOk());
  l.max_dim = 0;
  EXPECT_TRUE(Has(ValidateSizeLimits(l), "key 'limits.max_dim': must be >= 1"));
}

TEST(SizeLimitsTest, ServerConfigReadsLimitsAndConcurrencyCaps) {
  auto c = ParseServerConfig(
      "limits:\n  max_users: 5\n  max_items: 6\n  max_dim: 7\n  max_devices: 8\n"
      "  max_parties: 9\n  max_matrix_values: 10\nmax_threads: 40\nmax_concurrent_polls: 20\n"
      "calls:\n  operators: 4\n  operators_per_peer: 2\n  parties: 8\n  parties_per_peer: 3\n"
      "  device_hosts: 8\n  device_hosts_per_peer: 4\n  others: 2\n  others_per_peer: 1\n"
      "  idle_seconds: 30\n  max_seconds: 600\n",
      "s.yaml");
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->coordinator.limits.max_users, 5);
  EXPECT_EQ(c->coordinator.limits.max_items, 6);
  EXPECT_EQ(c->coordinator.limits.max_dim, 7);
  EXPECT_EQ(c->coordinator.limits.max_devices, 8);
  EXPECT_EQ(c->coordinator.limits.max_parties, 9);
  EXPECT_EQ(c->coordinator.limits.max_matrix_values, 10);
  EXPECT_EQ(c->max_threads, 40);
  EXPECT_EQ(c->max_concurrent_polls, 20);
  EXPECT_EQ(c->calls.operators.calls, 4);
  EXPECT_EQ(c->calls.parties.calls_per_peer, 3);
  EXPECT_EQ(c->calls.device_hosts.calls_per_peer, 4);
  EXPECT_EQ(c->calls.idle, absl::Seconds(30));
  EXPECT_EQ(c->calls.max, absl::Seconds(600));
  auto d = ParseServerConfig("listen: x\n", "s.yaml");
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->coordinator.limits.max_items, 1000000);
  EXPECT_EQ(d->max_threads, 320);
  EXPECT_EQ(d->max_concurrent_polls, 128);
  auto zero = ParseServerConfig("limits:\n  max_items: 0\n", "s.yaml");
  EXPECT_TRUE(Has(zero.status(), "limits.max_items")) << zero.status();
  auto typo = ParseServerConfig("limits:\n  max_itemz: 5\n", "s.yaml");
  EXPECT_THAT(typo, StatusIs(absl::StatusCode::kInvalidArgument));
  auto polls = ParseServerConfig("max_threads: 16\nmax_concurrent_polls: 16\n", "s.yaml");
  EXPECT_THAT(polls, StatusIs(absl::StatusCode::kInvalidArgument));
  auto polls2 = ParseServerConfig("max_concurrent_polls: 320\n", "s.yaml");
  EXPECT_TRUE(Has(polls2.status(), "key 'max_concurrent_polls'")) << polls2.status();
}

TEST(SizeLimitsTest, CallQuotasMustLeaveEveryRoleItsThreads) {
  // The pools add up to more threads than gRPC may start.
  auto over = ParseServerConfig("max_threads: 100\n", "s.yaml");
  EXPECT_TRUE(Has(over.status(), "keys 'calls.*'")) << over.status();
  auto per_peer = ParseServerConfig("calls:\n  parties: 8\n  parties_per_peer: 9\n", "s.yaml");
  EXPECT_TRUE(Has(per_peer.status(), "calls.parties_per_peer")) << per_peer.status();
  // An idle deadline shorter than a long poll would cut honest parties off.
  auto idle = ParseServerConfig("poll_seconds: 30\ncalls:\n  idle_seconds: 40\n", "s.yaml");
  EXPECT_TRUE(Has(idle.status(), "calls.idle_seconds")) << idle.status();
  auto fetch = ParseServerConfig("limits:\n  psi_fetch_bytes: 8388608\n", "s.yaml");
  EXPECT_TRUE(Has(fetch.status(), "limits.psi_fetch_bytes")) << fetch.status();
  auto typo = ParseServerConfig("calls:\n  partys: 3\n", "s.yaml");
  EXPECT_THAT(typo, StatusIs(absl::StatusCode::kInvalidArgument));
  // A dashboard off loopback needs its token file.
  auto remote =
      ParseServerConfig("dashboard_listen: 0.0.0.0:8080\ndashboard_allow_remote: true\n", "s.yaml");
  EXPECT_TRUE(Has(remote.status(), "dashboard_token_file")) << remote.status();
  auto with_token = ParseServerConfig(
      "dashboard_listen: 0.0.0.0:8080\ndashboard_allow_remote: true\n"
      "dashboard_token_file: t\n",
      "s.yaml");
  EXPECT_THAT(with_token.status(), IsOk());
}

TEST(SizeLimitsTest, LoopbackIsParsedNotMatchedByPrefix) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("127.evil.example"));  // a name, resolving anywhere
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.nip.io"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_THAT(CheckDashboardListen("127.evil.example:8080", false),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SizeLimitsTest, JobSpecTextIsBounded) {
  v1::JobSpec spec;
  spec.set_job_id("hfl-demo_1:2.b");
  spec.add_roster("party-0");
  EXPECT_THAT(CheckJobSpecText(spec), IsOk());
  spec.set_job_id(std::string(129, 'a'));
  EXPECT_TRUE(Has(CheckJobSpecText(spec), "field 'job_id'"));
  spec.set_job_id("a\x1b[2Kb");
  const absl::Status esc = CheckJobSpecText(spec);
  EXPECT_TRUE(Has(esc, "field 'job_id'"));
  EXPECT_EQ(std::string(esc.message()).find('\x1b'), std::string::npos);
  spec.set_job_id("ok");
  spec.add_roster(std::string(8 << 20, 'p'));
  const absl::Status huge = CheckJobSpecText(spec);
  EXPECT_TRUE(Has(huge, "field 'roster'"));
  EXPECT_LT(huge.message().size(), 200u);
}

TEST(PollLimiterTest, RefusesBeyondTheCapAndFreesSlotsOnRelease) {
  PollLimiter limiter(2);
  PollLimiter::Slot a, b, c;
  ASSERT_THAT(limiter.Acquire(&a), IsOk());
  ASSERT_THAT(limiter.Acquire(&b), IsOk());
  EXPECT_EQ(limiter.in_use(), 2);
  const absl::Status over = limiter.Acquire(&c);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Has(over, "max_concurrent_polls = 2")) << over;
  EXPECT_EQ(limiter.in_use(), 2);
  { PollLimiter::Slot gone = std::move(a); }
  EXPECT_EQ(limiter.in_use(), 1);
  EXPECT_THAT(limiter.Acquire(&c), IsOk());
  EXPECT_EQ(limiter.in_use(), 2);
}

}  // namespace
}  // namespace fedmf::server
