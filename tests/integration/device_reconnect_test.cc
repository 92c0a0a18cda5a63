// A fedmf-device host started before the server (issue 6): it must join
// within a few seconds of the server becoming reachable, however long it has
// been failing. The host dials the server through a TCP proxy
// (tcp_proxy.h) that first plays the server being away and then forwards:
//  * refusing: every connection is reset at once, as a port nobody listens
//    on (the server process not started yet);
//  * holding: connections are accepted and never answered, as a server
//    host whose TLS handshakes stall (the container test's symptom:
//    "Handshake timed out" / "timed out before receiving SETTINGS frame").
// The proxy's counters are what the test synchronizes on: it waits until
// the host has been failing for a while (its backoff has grown), then starts
// the server and measures until a small LFL job over the host's devices has
// finished (the host must have joined for it to run).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/data/loaders.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/integration/tcp_proxy.h"
#include "tests/testing/status_matchers.h"
#include "tools/fedmf/lfl_demo.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

constexpr char kData[] = "synthetic:users=60,items=40,density=0.2,seed=7";
// The promise: from the server coming up to the job finished, the host's
// reconnection (one connection attempt, <= 5 s, plus gRPC's backoff,
// <= 2 s) and the job itself (~1 s idle; with active secure aggregation, the
// default since then, up to ~5 s while the 2-core machine also runs another
// test: 12.4 s in all was seen). Before the fix this took ~24 s:
// reconnection advanced on gRPC's 5 s backup poller only, which this bound
// still catches.
constexpr absl::Duration kJoinBound = absl::Seconds(16);
constexpr absl::Duration kJobTimeout = absl::Seconds(60);

// Polls `done` every 50 ms until it holds or `timeout` passes.
bool PollUntil(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  return true;
}

class DeviceReconnectTest : public ClusterTest {
 protected:
  // The host starts against the proxy in its current (away) mode; the server
  // starts once the host has been failing for `late`.
  void RunLateServer(TcpProxy& proxy, absl::Duration late,
                     const std::function<int64_t()>& failed_attempts, int64_t min_attempts) {
    auto ds = data::LoadDataSpec(kData);
    ASSERT_THAT(ds, IsOk());
    cli::JobFlags f;
    f.rounds = 2;
    f.dim = 4;
    f.epsilon = "8";
    f.omega = 0.3;
    f.seed = 21;
    f.pretrain_epochs = 3;
    f.finetune_epochs = 3;
    auto job = cli::LflJobFromFlags(f, *ds, /*hosts=*/1, /*phase_deadline_seconds=*/30);
    ASSERT_THAT(job, IsOk());
    job->job_id = "lfl-late-server";

    cluster::ClusterOptions options;
    options.parties = 0;
    options.lfl_hosts = 1;
    options.dial_server = proxy.address();
    auto cluster = cluster::LocalCluster::Create(options);
    ASSERT_THAT(cluster, IsOk());
    cluster_ = std::move(*cluster);
    cluster::LflHostArgs host;
    host.data_spec = kData;
    host.first = static_cast<int64_t>(job->grants[0].first_device());
    host.count = job->grants[0].count();
    host.seed = 5;
    ASSERT_THAT(cluster_->StartLflHost(0, host), IsOk());

    ASSERT_TRUE(PollUntil([&] { return failed_attempts() >= 1; }, absl::Seconds(30)))
        << "the host never dialed";
    const absl::Time first_failure = absl::Now();
    // The server is late: the host keeps failing (and backing off) meanwhile.
    ASSERT_FALSE(PollUntil([&] { return !cluster_->LflHostRunning(0); }, late))
        << "the host gave up while the server was away";
    const int64_t failed = failed_attempts();
    ASSERT_GE(failed, min_attempts) << "the host did not retry while the server was away";

    ASSERT_THAT(cluster_->StartServer(), IsOk()) << "fedmf-server did not start";
    const absl::Time up = absl::Now();
    proxy.Forward(cluster_->server_port());
    auto id = cluster_->SubmitJob(net::SpecFromLflJob(*job));
    ASSERT_THAT(id, IsOk());
    // The first forwarded connection is not yet a joined host (its TLS
    // handshake may still stall): the job finishing is the measure.
    absl::Duration first_connection = absl::InfiniteDuration();
    auto st = cluster_->WaitJob(*id, kJobTimeout, [&](const v1::JobStatus&) {
      if (first_connection == absl::InfiniteDuration() && proxy.forwarded() > 0) {
        first_connection = absl::Now() - up;
      }
    });
    const absl::Duration finished = absl::Now() - up;
    ASSERT_THAT(st, IsOk());
    EXPECT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
    EXPECT_EQ(st->lfl().iterations_size(), 2);
    std::cout << "host failed " << failed << " attempts over "
              << absl::FormatDuration(up - first_failure) << "; after the server came up: first "
              << "connection forwarded within " << absl::FormatDuration(first_connection)
              << ", job finished after " << absl::FormatDuration(finished) << "\n";
    EXPECT_LE(finished, kJoinBound);
  }
};

// 12 s away: long enough for the backoffs (gRPC's, up to 2 s, and the
// host's, up to 10 s) to reach their caps.
TEST_F(DeviceReconnectTest, HostStartedBeforeTheServerJoinsWithinSeconds) {
  auto proxy = TcpProxy::Start();  // refusing until Forward()
  ASSERT_THAT(proxy, IsOk());
  RunLateServer(
      **proxy, absl::Seconds(12), [&] { return (*proxy)->refused(); },
      /*min_attempts=*/3);
}

// 6 s away, so the stalled attempt in flight when the server comes up would
// hold the host for 14 s more with gRPC's default 20 s attempt deadline.
TEST_F(DeviceReconnectTest, HostWhoseHandshakesStalledJoinsWithinSecondsOfTheServer) {
  auto proxy = TcpProxy::Start();
  ASSERT_THAT(proxy, IsOk());
  (*proxy)->Hold();
  RunLateServer(
      **proxy, absl::Seconds(6), [&] { return (*proxy)->held(); }, /*min_attempts=*/1);
}

}  // namespace
}  // namespace fedmf::it
