// LFL-SGDMF on real processes: fedmf-server and three fedmf-device hosts on
// loopback with mTLS, real secure aggregation (SecAgg+) in both rounds,
// actively secure by default (host-certified signed keys and the consistency
// check; docs/security.md).
//  * a seeded job's test MSE (Stage 1 and final) and epsilon equal those of
//    lfl::SimulateLfl over the in-process secure sum with the same seed: the
//    decoded fixed-point sums are exact, so the only difference allowed is
//    floating-point reassociation when the hosts' metrics are combined;
//  * a host whose devices vanish (--dropout) does not stop the job;
//  * malformed messages (a short masked vector, a duplicated share, a device
//    id the host is not granted) drop only that device.
#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data/loaders.h"
#include "common/lfl/lfl_simulator.h"
#include "common/lfl/secagg_sum.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tools/fedmf/lfl_demo.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

// 60 devices with ~8 ratings each, 40 items: small enough for a few seconds.
constexpr char kData[] = "synthetic:users=60,items=40,density=0.2,seed=7";
constexpr int kHosts = 3;

class LflClusterTest : public ClusterTest {
 protected:
  void SetUp() override {
    auto ds = data::LoadDataSpec(kData);
    ASSERT_THAT(ds, IsOk());
    dataset_ = *std::move(ds);
  }

  net::LflJobConfig Job(int iterations, double epsilon, double omega, uint64_t seed) {
    cli::JobFlags f;
    f.rounds = iterations;
    f.dim = 5;
    f.epsilon = absl::StrCat(epsilon);
    f.omega = omega;
    f.seed = seed;
    f.pretrain_epochs = 5;
    f.finetune_epochs = 5;
    auto job = cli::LflJobFromFlags(f, dataset_, kHosts, 30);
    EXPECT_THAT(job, IsOk());
    job->job_id = absl::StrCat("lfl-it-", seed);
    return *job;
  }

  // Starts the server and the hosts (host k: args[k]) and runs `job`.
  v1::JobStatus Run(const net::LflJobConfig& job, std::vector<cluster::LflHostArgs> args) {
    cluster::ClusterOptions options;
    options.parties = 0;
    options.lfl_hosts = kHosts;
    StartCluster(options, {});
    if (HasFatalFailure()) return {};
    for (int k = 0; k < kHosts; ++k) {
      args[k].data_spec = kData;
      args[k].first = static_cast<int64_t>(job.grants[k].first_device());
      args[k].count = job.grants[k].count();
      // The tests read the hosts' test metrics: opt in (off by default).
      args[k].policy_flags.push_back("--report-metrics");
      auto s = cluster_->StartLflHost(k, args[k]);
      EXPECT_THAT(s, IsOk());
    }
    auto id = cluster_->SubmitJob(net::SpecFromLflJob(job));
    EXPECT_THAT(id, IsOk());
    if (!id.ok()) return {};
    auto st = cluster_->WaitJob(*id, absl::Seconds(50));
    EXPECT_THAT(st, IsOk());
    if (!st.ok()) return {};
    EXPECT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
    return *st;
  }

  // The same job in one process over the in-process secure sum (in a key
  // session if `session`), for the daemons to match.
  lfl::LflResult Simulated(const net::LflJobConfig& job, bool session) {
    lfl::SecAggSumOptions o;
    o.requirements.dropout_rate = job.config.omega;
    o.session = session;
    auto sim =
        lfl::SimulateLfl(job.config, dataset_, lfl::MakeSecAggSum(o, random::Csprng::FromSeed(3)));
    EXPECT_THAT(sim, IsOk());
    return sim.ok() ? *std::move(sim) : lfl::LflResult{};
  }

  data::Dataset dataset_;
};

// Every one of the 60 devices was in both rounds of each of `iterations`
// iterations, and nothing was rejected.
void ExpectEveryDeviceEveryIteration(const v1::LflStatus& l, int iterations) {
  ASSERT_EQ(l.iterations_size(), iterations);
  for (const auto& r : l.iterations()) {
    EXPECT_FALSE(r.skipped()) << "iteration " << r.iteration();
    EXPECT_EQ(r.round1_survivors(), 60);
    EXPECT_EQ(r.round2_survivors(), 60);
    EXPECT_EQ(r.rejected_messages(), 0);
  }
}

TEST_F(LflClusterTest, MatchesInProcessSimulatorWithSameSeed) {
  net::LflJobConfig job = Job(/*iterations=*/4, /*epsilon=*/8, /*omega=*/0.3, /*seed=*/11);
  // A clip norm above one rating's 2 R^{3/2} = 22.4: the server's and the
  // hosts' codecs must both be sized for it, or whole gradients would not
  // encode (and the sums would not match the simulation's).
  job.config.device.clip_norm = 30;
  std::vector<cluster::LflHostArgs> hosts(kHosts);
  // The hosts' own --seed, equal to the job's: the simulator's streams and
  // split (the job's seed itself never reaches a device).
  for (int k = 0; k < kHosts; ++k) hosts[k].seed = 11;
  const v1::JobStatus st = Run(job, hosts);
  ASSERT_EQ(st.state(), v1::JOB_STATE_FINISHED);

  const lfl::LflResult sim = Simulated(job, /*session=*/false);

  const v1::LflStatus& l = st.lfl();
  ExpectEveryDeviceEveryIteration(l, 4);
  for (const auto& r : l.iterations()) {
    // Active secure aggregation: both rounds ran the consistency check.
    ASSERT_EQ(r.phase_seconds_size(), 10);
    EXPECT_GT(r.phase_seconds(8), 0);
    EXPECT_GT(r.phase_seconds(9), 0);
  }
  EXPECT_EQ(l.test_count(), sim.test.count);
  EXPECT_NEAR(l.stage1_test_mse(), sim.stage1_test.mse, 1e-9);
  EXPECT_NEAR(l.test_mse(), sim.test.mse, 1e-9);
  EXPECT_NEAR(l.epsilon(), sim.epsilon, 1e-12);
  EXPECT_NEAR(l.sigma_v(), sim.sigma_v, 1e-12);
  EXPECT_NEAR(l.server_view_noise_multiplier(), sim.server_view_noise_multiplier, 1e-12);
  EXPECT_LE(l.epsilon(), 8.0);
  // Training did something: the final model differs from Stage 1 alone.
  EXPECT_NE(l.test_mse(), l.stage1_test_mse());
}

// LflSpec.secagg_session over the daemons: one key setup (iteration 0's
// round 1), after which no aggregation agrees, advertises or relays a key;
// the sums are the same exact fixed-point sums, so the model is the
// simulator's (in-process session) to floating-point reassociation.
TEST_F(LflClusterTest, KeySessionSetsUpOnceAndMatchesTheSimulator) {
  net::LflJobConfig job = Job(/*iterations=*/4, /*epsilon=*/8, /*omega=*/0.3, /*seed=*/11);
  job.secagg_session = true;
  std::vector<cluster::LflHostArgs> hosts(kHosts);
  for (int k = 0; k < kHosts; ++k) hosts[k].seed = 11;
  const v1::JobStatus st = Run(job, hosts);
  ASSERT_EQ(st.state(), v1::JOB_STATE_FINISHED);

  const lfl::LflResult sim = Simulated(job, /*session=*/true);

  const v1::LflStatus& l = st.lfl();
  ExpectEveryDeviceEveryIteration(l, 4);
  for (const auto& r : l.iterations()) {
    EXPECT_EQ(r.key_setups(), r.iteration() == 0 ? 1 : 0) << "iteration " << r.iteration();
    if (r.iteration() > 0) {
      // No keys, signing keys or host certificates travel after the setup.
      EXPECT_LT(r.upload_bytes(), l.iterations(0).upload_bytes());
      EXPECT_LT(r.download_bytes(), l.iterations(0).download_bytes() / 2);
    }
  }
  EXPECT_NEAR(l.stage1_test_mse(), sim.stage1_test.mse, 1e-9);
  EXPECT_NEAR(l.test_mse(), sim.test.mse, 1e-9);
  EXPECT_NE(l.test_mse(), l.stage1_test_mse());
}

// A host whose devices vanish at every phase, in a key session: devices
// that missed the setup sit the job out, those that dropped later come back
// (their round seeds were revealed, never their keys), and the job finishes.
TEST_F(LflClusterTest, KeySessionWithDropoutsFinishesWithSurvivors) {
  net::LflJobConfig job = Job(/*iterations=*/3, /*epsilon=*/8, /*omega=*/0.5, /*seed=*/14);
  job.active_secagg = false;
  job.secagg_session = true;
  std::vector<cluster::LflHostArgs> hosts(kHosts);
  for (auto& h : hosts) h.policy_flags.push_back("--require-active-secagg=false");
  hosts[0].dropout = "0.4,0.4";
  for (int k = 0; k < kHosts; ++k) hosts[k].seed = 14;
  const v1::JobStatus st = Run(job, hosts);
  ASSERT_EQ(st.state(), v1::JOB_STATE_FINISHED);
  const v1::LflStatus& l = st.lfl();
  ASSERT_EQ(l.iterations_size(), 3);
  int64_t setups = 0, missing = 0;
  for (const auto& r : l.iterations()) {
    ASSERT_FALSE(r.skipped()) << "iteration " << r.iteration();
    EXPECT_GE(r.round1_survivors(), 40);  // only host 0's 20 devices may vanish
    EXPECT_LE(r.round2_survivors(), r.round1_survivors());
    EXPECT_GE(r.remaining_noise_variance(), l.sigma_v() * l.sigma_v() * (1 - 1e-12));
    setups += r.key_setups();
    missing += 60 - r.round2_survivors();
  }
  EXPECT_EQ(setups, 1);
  EXPECT_GT(missing, 0);  // the drill did drop devices
  EXPECT_TRUE(std::isfinite(l.test_mse()));
}

TEST_F(LflClusterTest, HostWithDropoutsFinishesWithSurvivors) {
  // omega 0.5 is beyond what active secure aggregation allows with 3 hosts
  // (2t > n + the largest other host): this drill of the threshold runs the
  // semi-honest variant, which the hosts must opt into.
  net::LflJobConfig job = Job(/*iterations=*/3, /*epsilon=*/8, /*omega=*/0.5, /*seed=*/12);
  job.active_secagg = false;
  std::vector<cluster::LflHostArgs> hosts(kHosts);
  for (auto& h : hosts) h.policy_flags.push_back("--require-active-secagg=false");
  hosts[0].dropout = "0.4,0.4";
  for (int k = 0; k < kHosts; ++k) hosts[k].seed = 12;  // the split counted below
  const v1::JobStatus st = Run(job, hosts);
  ASSERT_EQ(st.state(), v1::JOB_STATE_FINISHED);
  const v1::LflStatus& l = st.lfl();
  ASSERT_EQ(l.iterations_size(), 3);
  int64_t missing1 = 0, missing2 = 0;
  for (const auto& r : l.iterations()) {
    ASSERT_FALSE(r.skipped()) << "iteration " << r.iteration();
    EXPECT_GE(r.round1_survivors(), 30);  // ceil((1 - omega) n)
    EXPECT_LE(r.round1_survivors(), 60);
    EXPECT_LE(r.round2_survivors(), r.round1_survivors());
    // Only host 0's 20 devices may vanish.
    EXPECT_GE(r.round1_survivors(), 40);
    missing1 += 60 - r.round1_survivors();
    missing2 += r.round1_survivors() - r.round2_survivors();
    EXPECT_GE(r.remaining_noise_variance(), l.sigma_v() * l.sigma_v() * (1 - 1e-12));
  }
  // 20 devices x 3 iterations at 0.4: some vanish in each round for sure
  // (P[none] < 1e-6 per round even counting only those missing from the sum).
  EXPECT_GT(missing1, 0);
  EXPECT_GT(missing2, 0);
  EXPECT_TRUE(std::isfinite(l.test_mse()));
  EXPECT_GT(l.test_mse(), 0);
  // Every device still ran Stage 3: all test ratings are counted.
  int64_t expected_test = 0;
  {
    auto fed = data::PartitionLfl(dataset_, {job.config.test_fraction, 12});
    ASSERT_THAT(fed, IsOk());
    for (const auto& p : fed->parties) expected_test += static_cast<int64_t>(p.test.size());
  }
  EXPECT_EQ(l.test_count(), expected_test);
}

TEST_F(LflClusterTest, MalformedMessagesDropOnlyTheirDevice) {
  const net::LflJobConfig job = Job(/*iterations=*/2, /*epsilon=*/8, /*omega=*/0.3, /*seed=*/13);
  std::vector<cluster::LflHostArgs> hosts(kHosts);
  hosts[0].misbehave = "foreign-device:50";   // device 50 belongs to host 2
  hosts[1].misbehave = "short-vector:25";     // one value short
  hosts[2].misbehave = "duplicate-share:45";  // the same share twice
  const v1::JobStatus st = Run(job, hosts);
  ASSERT_EQ(st.state(), v1::JOB_STATE_FINISHED);
  const v1::LflStatus& l = st.lfl();
  ASSERT_EQ(l.iterations_size(), 2);
  // Iteration 0: exactly devices 25 and 45 are missing from the sum.
  EXPECT_EQ(l.iterations(0).round1_survivors(), 58);
  EXPECT_EQ(l.iterations(0).round2_survivors(), 58);
  // The three bad messages, plus possibly the secagg server's notes on the
  // two devices that then went missing from their phase.
  EXPECT_GE(l.iterations(0).rejected_messages(), 3);
  // Iteration 1: everybody behaves again.
  EXPECT_EQ(l.iterations(1).round1_survivors(), 60);
  EXPECT_EQ(l.iterations(1).rejected_messages(), 0);
  auto has = [&](const std::string& a, const std::string& b) {
    for (const std::string& line : l.dropped()) {
      if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("device 50", "not authorized")) << absl::StrJoin(l.dropped(), "\n");
  EXPECT_TRUE(has("device 25", "masked_input.masked")) << absl::StrJoin(l.dropped(), "\n");
  EXPECT_TRUE(has("device 45", "")) << absl::StrJoin(l.dropped(), "\n");
  EXPECT_TRUE(std::isfinite(l.test_mse()));
  EXPECT_GT(l.test_count(), 0);
}

// Fault drill: host 0 (20 of the 60 devices) is SIGKILLed the moment the
// unmasking request of iteration 0, round 1 reaches it (--misbehave
// crash-at-unmasking:1): its devices' masked inputs are already in U3, their
// unmasking responses never come, and the host stays dead. The abort rule
// (config.h) decides with m = ceil((1 - omega) n):
//   omega = 0.5, m = 30 <= |U4| = 40: the aggregation completes with all 60
//     inputs (U3), round 2 runs over the 40 still present, and every later
//     iteration over the 40 left;
//   omega = 0.2, m = 48 > 40: round 1 aborts at the unmasking boundary, the
//     iteration is skipped (V unchanged), and so is every later one (|U1| =
//     40 < 48) — the job itself still finishes.
// Either way the job finishes and Stage 3 counts exactly the survivors' test
// ratings (the dead host never reports).
class LflHostKilledTest : public LflClusterTest, public ::testing::WithParamInterface<double> {};

TEST_P(LflHostKilledTest, HostKilledDuringUnmaskingFollowsTheThreshold) {
  const double omega = GetParam();
  constexpr int kIterations = 3;
  net::LflJobConfig job = Job(kIterations, /*epsilon=*/8, omega, /*seed=*/21);
  job.join_deadline_seconds = 10;  // Stage 3 stops waiting for the dead host
  // As above: omega 0.5 needs the semi-honest variant (opted into by the hosts).
  job.active_secagg = false;
  std::vector<cluster::LflHostArgs> hosts(kHosts);
  for (auto& h : hosts) h.policy_flags.push_back("--require-active-secagg=false");
  hosts[0].misbehave = "crash-at-unmasking:1";
  for (int k = 0; k < kHosts; ++k) hosts[k].seed = 21;  // the split counted below
  const v1::JobStatus st = Run(job, hosts);
  ASSERT_EQ(st.state(), v1::JOB_STATE_FINISHED);
  EXPECT_FALSE(cluster_->LflHostRunning(0)) << "host 0 did not die";
  EXPECT_NE(cluster_->LflHostLog(0).find("killed during unmasking"), std::string::npos);
  const v1::LflStatus& l = st.lfl();
  ASSERT_EQ(l.iterations_size(), kIterations);
  const bool completes = omega == 0.5;
  for (const auto& r : l.iterations()) {
    SCOPED_TRACE(absl::StrCat("iteration ", r.iteration()));
    EXPECT_EQ(r.skipped(), !completes);
    if (!completes) continue;
    EXPECT_EQ(r.round1_survivors(), r.iteration() == 0 ? 60 : 40);
    EXPECT_EQ(r.round2_survivors(), 40);
  }
  EXPECT_TRUE(std::isfinite(l.test_mse()));
  int64_t expected_test = 0;
  auto fed = data::PartitionLfl(dataset_, {job.config.test_fraction, 21});
  ASSERT_THAT(fed, IsOk());
  for (int k = 1; k < kHosts; ++k) {
    const uint64_t first = job.grants[k].first_device();
    for (uint64_t d = first; d < first + static_cast<uint64_t>(job.grants[k].count()); ++d) {
      expected_test += static_cast<int64_t>(fed->parties[d].test.size());
    }
  }
  EXPECT_EQ(l.test_count(), expected_test);
}

INSTANTIATE_TEST_SUITE_P(Omega, LflHostKilledTest, ::testing::Values(0.5, 0.2),
                         [](const ::testing::TestParamInfo<double>& i) {
                           return i.param == 0.5 ? std::string("Completes") : std::string("Aborts");
                         });

}  // namespace
}  // namespace fedmf::it
