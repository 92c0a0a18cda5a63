// Hua et al. S3 on real processes (fedmf-server, fedmf-aggregator,
// fedmf-device --setting hua-s3 hosts) on loopback with mTLS:
//  - a seeded job reproduces `fedmf train --setting hua-s3` (SimulateHua, the
//    function behind it) with the same seed: same test ratings, MAE/MSE equal
//    up to summation order (1e-9);
//  - what the aggregator saw of the users' reports is uniform mod P (a
//    chi-square test on the top 4 bits: unmasked fixed-point gradients would
//    all sit in the two extreme bins);
//  - a host that vanishes mid-iteration does not corrupt the update: the
//    iteration completes in a repair pass with the users still there, the
//    job finishes and every decoded sum stayed in range.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "cluster_test_util.h"
#include "common/data/loaders.h"
#include "common/data/partition.h"
#include "common/hua/simulator.h"
#include "common/hua/wire/hua_codec.h"
#include "tests/testing/status_matchers.h"
#include "tools/cluster/local_cluster.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

constexpr char kData[] = "synthetic:users=60,items=30,density=0.2,seed=3";
constexpr uint64_t kSeed = 7;

hua::HuaParams Params() {
  hua::HuaParams p;
  p.scenario = hua::Scenario::kDynamic;
  p.dim = 8;
  p.iterations = 8;
  p.epsilon = 1.0;  // the valid variant (docs/privacy.md, section hua)
  p.join_prob = 0.3;
  p.leave_prob = 0.1;
  p.max_online = 20;
  return p;
}

struct HuaPlan {
  data::Dataset dataset;
  data::Federation fed;
  v1::JobSpec spec;
  int32_t users_with_ratings = 0;
};

// The job as `fedmf demo --setting hua-s3` submits it; `hosts` hosts split
// the users evenly.
HuaPlan Plan(int hosts, double round_deadline) {
  HuaPlan s;
  auto ds = data::LoadDataSpec(kData);
  EXPECT_THAT(ds, IsOk());
  s.dataset = *ds;
  auto fed = data::PartitionCentral(s.dataset, {0.1, kSeed});
  EXPECT_THAT(fed, IsOk());
  s.fed = *fed;
  const data::PartyData& split = s.fed.parties[0];
  std::set<int32_t> trained;
  for (const data::Rating& r : split.train) trained.insert(r.user);
  s.users_with_ratings = static_cast<int32_t>(trained.size());
  net::HuaJob job;
  job.params = Params();
  job.range = s.dataset.range;
  job.num_items = split.num_items();
  job.test_fraction = 0.1;
  job.has_seed = true;
  job.seed = kSeed;
  s.spec = net::SpecFromHuaJob(job);
  s.spec.set_job_id("hua-it");
  s.spec.set_round_deadline_seconds(round_deadline);
  s.spec.mutable_hua()->set_expected_users(s.users_with_ratings);
  s.spec.mutable_hua()->set_join_deadline_seconds(60);
  const int32_t n = split.num_users();
  for (int k = 0; k < hosts; ++k) {
    v1::DeviceGrant* g = s.spec.mutable_hua()->add_grants();
    g->set_host(cluster::LocalCluster::HuaHostName(k));
    g->set_first_device(n * k / hosts);
    g->set_count(n * (k + 1) / hosts - n * k / hosts);
  }
  return s;
}

class HuaClusterTest : public ClusterTest {
 protected:
  // Server + aggregator, the job submitted, then the hosts.
  void Run(HuaPlan& s, int hosts, bool record, int drop_host = -1, int drop_at = 0) {
    cluster::ClusterOptions o;
    o.parties = 0;
    o.hua_hosts = hosts;
    o.data_spec = kData;
    o.aggregator_record = record;
    ASSERT_NO_FATAL_FAILURE(StartCluster(o, {}));
    ASSERT_THAT(cluster_->StartAggregator(), IsOk());
    s.spec.mutable_hua()->set_aggregator(absl::StrCat("127.0.0.1:", cluster_->aggregator_port()));
    auto id = cluster_->SubmitJob(s.spec);
    ASSERT_THAT(id, IsOk());
    for (int k = 0; k < hosts; ++k) {
      const v1::DeviceGrant& g = s.spec.hua().grants(k);
      // The hosts opt in to reporting their test metrics (off by default)
      // and use the job's seed as their own test seed (never the job's); a
      // private job needs no other opt-in.
      ASSERT_TRUE(cluster_
                      ->StartHuaHost(k, kData, static_cast<int>(g.first_device()),
                                     static_cast<int>(g.count()), k == drop_host ? drop_at : 0,
                                     {"--report-metrics", "--seed", absl::StrCat(kSeed)})
                      .ok());
    }
    auto st = cluster_->WaitJob(*id, absl::Minutes(5));
    ASSERT_THAT(st, IsOk());
    status_ = *st;
  }

  v1::JobStatus status_;
};

TEST_F(HuaClusterTest, SeededJobMatchesFedmfTrainAndAggregatorSeesUniformValues) {
  HuaPlan s = Plan(/*hosts=*/3, /*round_deadline=*/30);
  ASSERT_NO_FATAL_FAILURE(Run(s, 3, /*record=*/true));
  ASSERT_EQ(status_.state(), v1::JOB_STATE_FINISHED) << status_.error();
  const v1::HuaStatus& h = status_.hua();
  EXPECT_EQ(h.registered_users(), s.users_with_ratings);
  ASSERT_EQ(h.iterations_size(), Params().iterations);
  for (const v1::HuaIterationRecord& r : h.iterations()) {
    EXPECT_EQ(r.dropped_users(), 0) << "iteration " << r.iteration();
    EXPECT_EQ(r.passes(), 1) << "iteration " << r.iteration();
  }

  // What `fedmf train --setting hua-s3 --seed 7` computes on the same split.
  auto sim = hua::SimulateHua(hua::Scenario::kDynamic, s.fed.parties[0], Params(), kSeed);
  ASSERT_THAT(sim, IsOk());
  EXPECT_EQ(h.test_count(), sim->test.count);
  EXPECT_NEAR(h.test_mae(), sim->test.mae, 1e-9);
  EXPECT_NEAR(h.test_mse(), sim->test.mse, 1e-9);
  EXPECT_GT(std::abs(sim->test.mae - sim->baseline_test.mae), 0.0);  // noise did something
  // Every user's epsilon as the server counts it: the busiest user's is the
  // simulator's (no dropouts: the server's count is the users' own) and
  // within the job's budget.
  EXPECT_EQ(h.users_size(), s.users_with_ratings);
  EXPECT_DOUBLE_EQ(h.epsilon(), sim->epsilon);
  EXPECT_LE(h.epsilon(), Params().epsilon);
  EXPECT_GT(h.epsilon(), 0);

  // The third party's view: every recorded value, top 4 bits, 16 bins.
  auto rec = cluster_->AggregatorRecorded(status_.spec().job_id());
  ASSERT_THAT(rec, IsOk());
  std::vector<int64_t> bins(16, 0);
  int64_t n = 0;
  std::set<std::string> hosts;
  for (const v1::HuaReportBatch& b : rec->batches()) {
    hosts.insert(b.host());
    for (const v1::HuaMaskedReport& r : b.reports()) {
      for (const v1::HuaMaskedValue& v : r.items()) {
        for (uint64_t x : v.value()) {
          ++bins[x >> 60];
          ++n;
        }
      }
    }
  }
  EXPECT_EQ(hosts.size(), 3u);
  ASSERT_GT(n, 2000);
  double chi2 = 0;
  const double expected = static_cast<double>(n) / 16;
  for (int64_t c : bins) chi2 += (c - expected) * (c - expected) / expected;
  // df = 15: P(chi2 > 45) ~ 7e-5. Unmasked encodings would give chi2 ~ 7n.
  EXPECT_LT(chi2, 45.0) << "n = " << n;
}

TEST_F(HuaClusterTest, HostVanishingMidIterationIsRepairedAndTheJobFinishes) {
  // A round deadline beyond the server's liveness window (3 s): when the repair
  // pass runs, the vanished host already counts as offline.
  HuaPlan s = Plan(/*hosts=*/2, /*round_deadline=*/5);
  ASSERT_NO_FATAL_FAILURE(Run(s, 2, /*record=*/false, /*drop_host=*/1, /*drop_at=*/3));
  ASSERT_EQ(status_.state(), v1::JOB_STATE_FINISHED) << status_.error();
  EXPECT_FALSE(cluster_->HuaHostRunning(1));
  const v1::HuaStatus& h = status_.hua();
  ASSERT_EQ(h.iterations_size(), Params().iterations);
  int drop = -1;  // the first iteration >= 3 in which host 1 had users selected
  for (int t = 0; t < h.iterations_size() && drop < 0; ++t) {
    if (h.iterations(t).dropped_users() > 0) drop = t;
  }
  ASSERT_GE(drop, 2) << "host 1 never dropped out, or before iteration 3";
  const v1::HuaIterationRecord& r = h.iterations(drop);
  EXPECT_GE(r.passes(), 2);  // host 1's items re-planned among host 0's users
  EXPECT_GT(r.items_updated(), 0);
  for (int t = drop + 1; t < h.iterations_size(); ++t) {
    EXPECT_EQ(h.iterations(t).dropped_users(), 0) << "the vanished host is not reselected";
  }
  // Only host 0 reported its test error; it is a real number near the data's scale.
  int64_t host0_test = 0;
  const int32_t half = s.fed.parties[0].num_users() / 2;
  for (const data::Rating& r : s.fed.parties[0].test) host0_test += r.user < half;
  EXPECT_EQ(h.test_count(), host0_test);
  EXPECT_TRUE(std::isfinite(h.test_mae()));
  EXPECT_LT(h.test_mae(), 4.0);
}

}  // namespace
}  // namespace fedmf::it
