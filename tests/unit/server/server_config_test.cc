// The server's configuration file (server/server_config.h): every key read,
// unknown and out-of-range keys refused naming the file and line.
#include "server/server_config.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf {
namespace {

TEST(ServerConfigTest, ParsesEveryKey) {
  auto c = server::ParseServerConfig(R"(
listen: 127.0.0.1:0
port_file: /tmp/p
database: /tmp/s.db
max_chunk_values: 4096
poll_seconds: 0.5
liveness_seconds: 3
offer_deadline_seconds: 9
round_deadline_seconds: 30
finish_deadline_seconds: 31
allowed_parties: [a, b]
seed: 12
log_format: json
tls:
  insecure: true
  cert_dir: /c
  name: srv
)",
                                     "s.yaml");
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->listen, "127.0.0.1:0");
  EXPECT_EQ(c->max_chunk_values, 4096);
  EXPECT_EQ(c->coordinator.poll, absl::Milliseconds(500));
  EXPECT_EQ(c->coordinator.default_round_deadline, absl::Seconds(30));
  EXPECT_EQ(c->coordinator.allowed_parties, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c->coordinator.seed, std::optional<uint64_t>(12));
  EXPECT_TRUE(c->tls.insecure);
  EXPECT_EQ(c->tls.name, "srv");
  EXPECT_EQ(c->log_format, "json");
}

TEST(ServerConfigTest, RejectsUnknownAndOutOfRange) {
  EXPECT_THAT(server::ParseServerConfig("databse: x\n", "s.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(server::ParseServerConfig("tls:\n  nmae: x\n", "s.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(server::ParseServerConfig("max_chunk_values: 10\n", "s.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(server::ParseServerConfig("poll_seconds: 0\n", "s.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(server::ParseServerConfig("log_format: xml\n", "s.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(server::ParseServerConfig("seed: -3\n", "s.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  auto s = server::ParseServerConfig("listen: a\nfoo: 1\n", "s.yaml");
  EXPECT_NE(s.status().message().find("s.yaml:2"), std::string::npos) << s.status();
}

TEST(ServerConfigTest, DashboardIsLoopbackOnlyUnlessAllowed) {
  auto local = server::ParseServerConfig(
      "dashboard_listen: 127.0.0.1:0\ndashboard_port_file: /tmp/d.port\n", "s.yaml");
  ASSERT_THAT(local, IsOk());
  EXPECT_EQ(local->dashboard_listen, "127.0.0.1:0");
  EXPECT_EQ(local->dashboard_port_file, "/tmp/d.port");
  EXPECT_FALSE(local->dashboard_allow_remote);
  EXPECT_THAT(server::ParseServerConfig("dashboard_listen: '[::1]:8080'\n", "s.yaml"), IsOk());
  auto remote = server::ParseServerConfig("dashboard_listen: 0.0.0.0:8080\n", "s.yaml");
  ASSERT_THAT(remote, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(remote.status().message().find("dashboard_listen"), std::string::npos);
  EXPECT_NE(remote.status().message().find("dashboard_allow_remote: true"), std::string::npos);
  // Off loopback, anyone reaching the port would read the jobs: a token file
  // is required as well (issue 55).
  EXPECT_FALSE(server::ParseServerConfig(
                   "dashboard_listen: 0.0.0.0:8080\ndashboard_allow_remote: true\n", "s.yaml")
                   .ok());
  EXPECT_TRUE(server::ParseServerConfig("dashboard_listen: 0.0.0.0:8080\ndashboard_allow_remote: "
                                        "true\ndashboard_token_file: /etc/t\n",
                                        "s.yaml")
                  .ok());
  EXPECT_THAT(server::ParseServerConfig("dashboard_listen: 8080\n", "s.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf
