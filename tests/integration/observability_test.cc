// Operations surface of the real daemons: `fedmf health` (grpc.health.v1)
// against fedmf-server and fedmf-party, and the server's Prometheus /metrics
// scraped over HTTP while an HFL job runs, synchronized on the job's status.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/metrics/metrics.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

class ObservabilityTest : public ClusterTest {
 protected:
  std::string Tls() const {
    return absl::StrCat("--cert-dir ", cluster_->cert_dir(), " --name operator");
  }
  // GET /metrics, parsed; fails the test on HTTP or format errors.
  std::vector<metrics::Sample> Scrape() {
    httplib::Client client("127.0.0.1", cluster_->server_metrics_port());
    client.set_read_timeout(10, 0);
    auto res = client.Get("/metrics");
    std::vector<metrics::Sample> samples;
    EXPECT_TRUE(res) << "scrape failed: " << httplib::to_string(res.error());
    if (!res) return samples;
    EXPECT_EQ(res->status, 200);
    EXPECT_TRUE(
        absl::StartsWith(res->get_header_value("Content-Type"), "text/plain; version=0.0.4"));
    absl::Status s = metrics::ParseExposition(res->body, &samples);
    EXPECT_THAT(s, IsOk()) << s << "\n" << res->body;
    return samples;
  }
  static double Value(const std::vector<metrics::Sample>& samples, const std::string& name,
                      const metrics::Labels& labels = {}) {
    for (const auto& s : samples) {
      if (s.name == name && s.labels == labels) return s.value;
    }
    ADD_FAILURE() << "no sample " << name;
    return -1;
  }
};

TEST_F(ObservabilityTest, HealthIsServingForServerAndEveryPartyAndFailsClearlyOtherwise) {
  auto plan = PlanJob(SyntheticHflFlags(2), "health", 60, 1);
  ASSERT_THAT(plan, IsOk());
  ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*plan), {0, 1, 2}));

  auto [code, out] = RunFedmf(absl::StrCat("health 127.0.0.1:", cluster_->server_port(), " ", Tls(),
                                           " --peer-name server"));
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(out, "SERVING\n");
  for (int k = 0; k < 3; ++k) {
    auto [pcode, pout] =
        RunFedmf(absl::StrCat("health 127.0.0.1:", cluster_->admin_port(k), " ", Tls(),
                              " --peer-name ", cluster::LocalCluster::PartyName(k)));
    EXPECT_EQ(pcode, 0) << pout;
    EXPECT_EQ(pout, "SERVING\n");
  }
  // An unknown service is not SERVING: the RPC fails NOT_FOUND.
  auto [scode, sout] = RunFedmf(absl::StrCat("health 127.0.0.1:", cluster_->server_port(), " ",
                                             Tls(), " --service no.such.Service"));
  EXPECT_EQ(scode, 3) << sout;
  EXPECT_TRUE(absl::StrContains(sout, "no.such.Service")) << sout;
  // The TLS cause is named by the client itself (not only in the server's
  // log): the wrong daemon ...
  auto [wcode, wout] = RunFedmf(absl::StrCat("health 127.0.0.1:", cluster_->server_port(), " ",
                                             Tls(), " --peer-name party-0 --timeout 2"));
  EXPECT_EQ(wcode, 3) << wout;
  EXPECT_TRUE(absl::StrContains(wout,
                                "presents the certificate of 'server' (role server), not "
                                "of 'party-0': pass --peer-name server"))
      << wout;
  // ... and certificates of another federation's CA.
  const std::string other_ca = cluster_->work_dir() + "/other-ca";
  const std::string other_certs = cluster_->work_dir() + "/other-certs";
  ASSERT_EQ(RunFedmf(absl::StrCat("ca init --dir ", other_ca, " --federation other")).first, 0);
  ASSERT_EQ(RunFedmf(absl::StrCat("ca issue --dir ", other_ca,
                                  " --name operator --role operator --out ", other_certs))
                .first,
            0);
  auto [fcode, fout] =
      RunFedmf(absl::StrCat("health 127.0.0.1:", cluster_->server_port(), " --cert-dir ",
                            other_certs, " --name operator --peer-name server --timeout 2"));
  EXPECT_EQ(fcode, 3) << fout;
  EXPECT_TRUE(absl::StrContains(fout, "certificate does not verify against this client's CA"))
      << fout;
  // Plaintext against an mTLS daemon never reports SERVING.
  auto [icode, iout] = RunFedmf(
      absl::StrCat("health 127.0.0.1:", cluster_->server_port(), " --insecure --timeout 2"));
  EXPECT_EQ(icode, 3) << iout;
  // A stopped server: unreachable, named in the error.
  const int port = cluster_->server_port();
  cluster_->KillServer();
  auto [dcode, dout] =
      RunFedmf(absl::StrCat("health 127.0.0.1:", port, " ", Tls(), " --timeout 1"));
  EXPECT_EQ(dcode, 3) << dout;
  EXPECT_TRUE(absl::StrContains(dout, absl::StrCat("127.0.0.1:", port))) << dout;
  EXPECT_TRUE(absl::StrContains(
      dout, absl::StrCat("cause: nothing listens on 127.0.0.1:", port, " (connection refused)")))
      << dout;
  // Missing TLS material is a usage error naming the file.
  auto [mcode, mout] = RunFedmf(
      absl::StrCat("health 127.0.0.1:", port, " --cert-dir /nonexistent-fedmf --name operator"));
  EXPECT_EQ(mcode, 2) << mout;
  EXPECT_TRUE(absl::StrContains(mout, "/nonexistent-fedmf")) << mout;
}

TEST_F(ObservabilityTest, MetricsAreValidPrometheusTextAndFollowTheRounds) {
  constexpr int kRounds = 6;
  auto plan = PlanJob(SyntheticHflFlags(kRounds), "metrics", 60, 1);
  ASSERT_THAT(plan, IsOk());
  cluster::ClusterOptions options = OptionsFor(*plan);
  options.metrics = true;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options, {0, 1, 2}));
  ASSERT_GT(cluster_->server_metrics_port(), 0);

  auto before = Scrape();
  EXPECT_EQ(Value(before, "fedmf_server_rounds_completed_total"), 0);
  EXPECT_EQ(Value(before, "fedmf_server_round_duration_seconds_count"), 0);

  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  // Every time the job's status shows more committed rounds, the counter
  // (incremented at the same commit) is at least that and never goes back.
  std::vector<double> seen{0};
  auto st = cluster_->WaitJob(*id, absl::Minutes(3), [&](const v1::JobStatus& s) {
    if (s.rounds_size() == 0 || s.state() != v1::JOB_STATE_RUNNING) return;
    const double rounds = Value(Scrape(), "fedmf_server_rounds_completed_total");
    EXPECT_GE(rounds, s.rounds_size());
    EXPECT_LE(rounds, kRounds);
    EXPECT_GE(rounds, seen.back());
    if (rounds != seen.back()) seen.push_back(rounds);
  });
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  ASSERT_EQ(st->rounds_size(), kRounds);

  auto after = Scrape();
  EXPECT_EQ(Value(after, "fedmf_server_rounds_completed_total"), kRounds);
  EXPECT_EQ(Value(after, "fedmf_server_round_duration_seconds_count"), kRounds);
  EXPECT_EQ(Value(after, "fedmf_server_round_duration_seconds_bucket", {{"le", "+Inf"}}), kRounds);
  double total_seconds = 0;
  for (const auto& r : st->rounds()) total_seconds += r.seconds();
  EXPECT_NEAR(Value(after, "fedmf_server_round_duration_seconds_sum"), total_seconds, 1e-6);
  EXPECT_EQ(Value(after, "fedmf_server_jobs_finished_total"), 1);
  EXPECT_EQ(Value(after, "fedmf_server_aggregation_aborts_total"), 0);
  EXPECT_EQ(Value(after, "fedmf_server_dropouts_total"), 0);
  EXPECT_EQ(Value(after, "fedmf_server_parties_connected"), 3);
  // Every round: each party downloads V and uploads V_k, so traffic grows
  // with at least rounds x parties x (items x dim) values each way.
  // Shared matrices travel as float32 (net::kWireEncoding): 4 bytes a value.
  const double matrix_bytes = 4.0 * plan->config.dim * plan->dataset.num_items;
  EXPECT_GE(Value(after, "fedmf_server_received_bytes_total"), kRounds * 3 * matrix_bytes);
  EXPECT_GE(Value(after, "fedmf_server_sent_bytes_total"), kRounds * 3 * matrix_bytes);
  // ... and not as 8-byte doubles.
  EXPECT_LT(Value(after, "fedmf_server_received_bytes_total"), kRounds * 3 * 1.5 * matrix_bytes);
  EXPECT_LT(Value(after, "fedmf_server_sent_bytes_total"), kRounds * 3 * 1.5 * matrix_bytes);
  // Per party (PartyStatus.bytes_up/down, what `fedmf demo --json` prints):
  // T uploads and T + 1 downloads (Stage 3 reads the final V) of one float32
  // matrix each; a retried stream may count twice, never less than once.
  int64_t up_total = 0, down_total = 0;
  for (const v1::PartyStatus& p : st->parties()) {
    EXPECT_GT(p.epsilon_spent(), 0) << p.name();
    EXPECT_DOUBLE_EQ(Value(after, "fedmf_server_epsilon_spent", {{"party", p.name()}}),
                     p.epsilon_spent());
    EXPECT_GE(p.bytes_up(), kRounds * matrix_bytes) << p.name();
    EXPECT_LE(p.bytes_up(), 2 * kRounds * matrix_bytes) << p.name();
    EXPECT_GE(p.bytes_down(), (kRounds + 1) * matrix_bytes) << p.name();
    EXPECT_LE(p.bytes_down(), 2 * (kRounds + 1) * matrix_bytes) << p.name();
    up_total += p.bytes_up();
    down_total += p.bytes_down();
  }
  // Matrices are part of all the server's traffic.
  EXPECT_LE(up_total, Value(after, "fedmf_server_received_bytes_total"));
  EXPECT_LE(down_total, Value(after, "fedmf_server_sent_bytes_total"));
  // The operator's recommendation command, as JSON: the top 3 for a user of
  // party-0, best first, none of them rated by that user.
  const data::PartyData& party = plan->federation.parties[0];
  const std::string user = plan->dataset.user_ids[party.global_users[0]];
  auto [rcode, rout] = RunFedmf(absl::StrCat(
      "recommend --party 127.0.0.1:", cluster_->admin_port(0), " --party-name ",
      cluster::LocalCluster::PartyName(0), " ", Tls(), " --user ", user, " --top 3 --json"));
  ASSERT_EQ(rcode, 0) << rout;
  const nlohmann::json recs = nlohmann::json::parse(rout);
  EXPECT_EQ(recs["user"], user);
  EXPECT_EQ(recs["include_rated"], false);
  ASSERT_EQ(recs["items"].size(), 3u) << rout;
  std::set<std::string> rated;
  for (const auto* split : {&party.train, &party.test}) {
    for (const data::Rating& r : *split) {
      if (r.user == 0) rated.insert(plan->dataset.item_ids[party.global_items[r.item]]);
    }
  }
  for (size_t i = 0; i < recs["items"].size(); ++i) {
    const std::string item = recs["items"][i]["item"];
    EXPECT_EQ(rated.count(item), 0u) << item;
    // Ordered by the party's ranking rule (docs/results.md, section
    // ranking), shown as the predicted rating: within the declared range,
    // not necessarily decreasing.
    const double score = recs["items"][i]["score"].get<double>();
    EXPECT_GE(score, plan->dataset.range.min - 1e-9) << item;
    EXPECT_LE(score, plan->dataset.range.max + 1e-9) << item;
  }
}

}  // namespace
}  // namespace fedmf::it
