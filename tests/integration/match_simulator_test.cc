// Acceptance 1: the daemons reproduce the single-process simulator. A seeded
// job over real fedmf-server + fedmf-party processes (mTLS on loopback) gives
// every party the test MSE `fedmf train` reports for the same seed and
// settings, on MovieLens 100K, for VFL and HFL with s = 3 and T = 100.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fmf/simulator.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

// The JSON object fedmf prints is one line; progress and log lines (stderr)
// are others.
nlohmann::json LastJsonLine(const std::string& out) {
  std::string last;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StartsWith(line, "{")) last = std::string(line);
  }
  return nlohmann::json::parse(last);
}

class MatchSimulatorTest : public ClusterTest {
 protected:
  // `tweak` adjusts the flags (both runs get the same job).
  // `tolerance` bounds |daemons - simulator| of each party's test MSE.
  void RunAndCompare(const std::string& setting,
                     const std::function<void(cli::JobFlags&)>& tweak = nullptr,
                     double tolerance = 0.02) {
    if (!HaveMl100k()) {
      GTEST_SKIP() << "../shared dataset missing: MovieLens 100K not found at "
                   << Ml100kRatingsPath()
                   << " (download it to ../shared/data/ml-100k to run this test)";
    }
    cli::JobFlags flags;
    flags.setting = cli::ParseSettingKind(setting).value();
    flags.data = "movielens:" + Ml100kRatingsPath();
    flags.parties = 3;
    flags.seed = 1;
    flags.epsilon = "1";  // default T = 100, T' = 10, p = 20 (as `fedmf train`)
    if (tweak) tweak(flags);
    auto plan = PlanJob(flags, "match-" + setting, /*round_deadline_seconds=*/120,
                        /*min_parties=*/1);
    ASSERT_THAT(plan, IsOk());
    ASSERT_EQ(plan->config.rounds, 100);

    // The reference: what `fedmf train --seed 1 --json` computes.
    auto sim = fmf::Simulate(plan->config, plan->federation);
    ASSERT_THAT(sim, IsOk());
    ASSERT_EQ(sim->parties.size(), 3u);

    ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*plan), {0, 1, 2}));
    auto id = cluster_->SubmitJob(plan->spec);
    ASSERT_THAT(id, IsOk());
    auto st = cluster_->WaitJob(*id, absl::Minutes(10));
    ASSERT_THAT(st, IsOk());
    ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
    ASSERT_EQ(st->rounds_size(), 100);
    for (int t = 0; t < st->rounds_size(); ++t) {
      EXPECT_EQ(st->rounds(t).round(), t);
      EXPECT_EQ(st->rounds(t).contributors_size(), 3) << "round " << t;
    }
    ASSERT_EQ(st->parties_size(), 3);
    double weighted = 0;
    int64_t count = 0;
    for (int k = 0; k < 3; ++k) {
      const v1::PartyStatus& p = st->parties(k);  // roster order = party index
      const fmf::PartyResult& want = sim->parties[k];
      SCOPED_TRACE(p.name());
      EXPECT_EQ(p.name(), cluster::LocalCluster::PartyName(k));
      EXPECT_TRUE(p.accepted());
      EXPECT_EQ(p.test_count(), want.test.count);
      EXPECT_NEAR(p.test_mse(), want.test.mse, tolerance);
      EXPECT_LE(p.epsilon_spent(), 1.0 + 1e-9);
      EXPECT_GT(p.epsilon_spent(), 0.5);  // a private job did spend budget
      EXPECT_NEAR(p.epsilon_spent(), want.epsilon, 1e-6);
      EXPECT_EQ(p.last_round(), 99);
      weighted += p.test_mse() * p.test_count();
      count += p.test_count();
      // The party's own ledger agrees: one entry per round (+ the paper's
      // VFL Stage 3 DP fine-tuning charge at round T) + the size release
      // (round T + 1, docs/privacy.md section size-release), within budget.
      auto ledger = cluster_->PartyLedger(k);
      ASSERT_THAT(ledger, IsOk());
      EXPECT_LE(ledger->epsilon_spent(), 1.0 + 1e-9);
      const std::vector<int> rounds = LedgerRounds(*ledger, *id);
      const bool kappa_charged = setting == "vfl" && !plan->config.VflLocalFinish();
      EXPECT_EQ(rounds.size(), kappa_charged ? 102u : 101u);
      EXPECT_EQ(std::count(rounds.begin(), rounds.end(), 101), 1);
    }
    ASSERT_GT(count, 0);
    EXPECT_NEAR(weighted / count, sim->test.mse, tolerance);
    std::cout << setting << ": daemons test MSE " << std::setprecision(12) << weighted / count
              << ", simulator " << sim->test.mse << "\n";
  }
};

TEST_F(MatchSimulatorTest, VflOnMl100kMatchesFedmfTrain) { RunAndCompare("vfl"); }

// The paper's VFL, whose Stage 3 is kappa more DP steps charged at round T.
TEST_F(MatchSimulatorTest, VflPaperOnMl100kMatchesFedmfTrain) {
  RunAndCompare("vfl", [](cli::JobFlags& f) { f.algorithm = "paper"; });
}

TEST_F(MatchSimulatorTest, HflOnMl100kMatchesFedmfTrain) { RunAndCompare("hfl"); }

// The job spec carries the algorithm, its knobs and the clip norm: the
// parties run the alternate algorithm with per-user clipping exactly as the
// simulator does, to 1e-6 (a dropped field changes the test MSE by far more).
TEST_F(MatchSimulatorTest, HflAlternateWithUserClippingMatchesFedmfTrain) {
  RunAndCompare(
      "hfl",
      [](cli::JobFlags& f) {
        f.algorithm = "alternate";
        f.alternations = 4;
        f.hfl_clip = 3;
        f.lr = 0.2;
      },
      /*tolerance=*/1e-6);
}

// fedmf demo --compare runs the baselines on the split the daemons trained
// on: the same mse_local, mse_central (and the no-transfer job) as fedmf
// train --compare from the same flags, and a gain computed from the demo's
// own test MSE. A small synthetic federation keeps it to seconds. The
// algorithm is named: fedmf train's default for hfl is stats (issue #53),
// which the daemons do not run yet.
TEST(DemoCompareTest, BaselinesMatchFedmfTrainAndTheGainUsesTheDaemonsMse) {
  const std::string flags =
      "--setting hfl --parties 3 --data synthetic:users=150,items=60,density=0.2,seed=3 "
      "--seed 4 --epsilon 2 --T 6 --T-local 2 --json --compare --algorithm alternate";
  auto [tcode, tout] = RunFedmf(absl::StrCat("train ", flags, " --quiet"));
  ASSERT_EQ(tcode, 0) << tout;
  auto [dcode, dout] = RunFedmf(absl::StrCat("demo ", flags));
  ASSERT_EQ(dcode, 0) << dout;
  const nlohmann::json t = LastJsonLine(tout);
  const nlohmann::json d = LastJsonLine(dout);
  for (const char* key : {"mse_local", "mse_local_sgd", "mse_no_transfer", "mse_central"}) {
    ASSERT_TRUE(d.contains(key)) << key << " missing: " << dout;
    EXPECT_DOUBLE_EQ(d[key].get<double>(), t[key].get<double>()) << key;
  }
  EXPECT_EQ(d["mse_local_kind"], t["mse_local_kind"]);
  const double local = d["mse_local"], central = d["mse_central"], mse = d["test_mse"];
  ASSERT_GT(local, central);
  EXPECT_NEAR(d["gain_captured"].get<double>(), (local - mse) / (local - central), 1e-12);
  EXPECT_NEAR(mse, t["test_mse"].get<double>(), 1e-6);  // the daemons reproduce train
  // The demo reports the same accounting as train (issue #54): what each
  // step samples and how each party's epsilon composes.
  for (const char* key : {"sampling_unit", "sample_rate", "noise_multiplier", "steps",
                          "count_noise_multiplier", "accounting"}) {
    ASSERT_TRUE(d.contains(key)) << key << " missing: " << dout;
    EXPECT_EQ(d[key], t[key]) << key;
  }
  EXPECT_EQ(d["sampling_unit"], "user");
}

// Without TLS (`--insecure`, tls.insecure in the configs) the daemons train
// the model `fedmf train` computes, as they do under mTLS: the upload's header
// names the party, the only name the server has for it then. (Until it did,
// every upload was refused and the job failed at round 0's deadline.)
TEST(DemoInsecureTest, PlaintextDaemonsTrainWhatFedmfTrainComputes) {
  for (const char* setting : {"hfl", "vfl"}) {
    SCOPED_TRACE(setting);
    const std::string flags =
        absl::StrCat("--setting ", setting,
                     " --parties 3 --data synthetic:users=150,items=60,density=0.2,seed=3 --seed 4 "
                     "--epsilon 2 --T 6 --T-local 2 --json --algorithm alternate");
    auto [tcode, tout] = RunFedmf(absl::StrCat("train ", flags, " --quiet"));
    ASSERT_EQ(tcode, 0) << tout;
    // stdout is the JSON object alone (no log line, e.g. the TLS warning).
    const std::string err_path = ::testing::TempDir() + "/demo-insecure.err";
    auto [dcode, dout] =
        RunFedmf(absl::StrCat("demo ", flags, " --insecure --timeout 60"), err_path);
    ASSERT_EQ(dcode, 0) << dout << TailOf(ReadFile(err_path), 40);
    EXPECT_THAT(ReadFile(err_path), ::testing::HasSubstr("TLS DISABLED"));
    const nlohmann::json t = LastJsonLine(tout);
    const nlohmann::json d = nlohmann::json::parse(dout);
    EXPECT_NEAR(d["test_mse"].get<double>(), t["test_mse"].get<double>(), 1e-6);
    EXPECT_EQ(d["rounds"], 6);
  }
}

}  // namespace
}  // namespace fedmf::it
