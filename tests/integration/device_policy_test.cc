// A device host's own policy against the server's job, on real processes
// (fedmf-server and three fedmf-device hosts with the DEFAULT policy, mTLS):
// a job asking epsilon = inf, an epsilon above the hosts' max_epsilon, or
// semi-honest secure aggregation (require_active_secagg, on by default) is
// refused by every host before any device computes anything: the hosts log
// the refusal, no device enters a sum (every iteration is skipped), and the
// hosts' ledgers stay empty (nothing was released).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "absl/strings/str_cat.h"
#include "client-device/device_ledger.h"
#include "common/data/loaders.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tools/fedmf/lfl_demo.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

constexpr char kData[] = "synthetic:users=30,items=20,density=0.2,seed=5";
constexpr int kHosts = 3;
constexpr int kIterations = 2;

class DeviceHostRefusalTest : public ClusterTest,
                              public ::testing::WithParamInterface<std::string> {};

TEST_P(DeviceHostRefusalTest, DefaultPolicyRefusesTheJobAndReleasesNothing) {
  auto ds = data::LoadDataSpec(kData);
  ASSERT_THAT(ds, IsOk());
  cli::JobFlags f;
  f.rounds = kIterations;
  f.dim = 4;
  // "inf", 50 > the default max_epsilon 8, or a semi-honest secure
  // aggregation (the default policy has require_active_secagg).
  f.epsilon = GetParam() == "semi-honest" ? "4" : GetParam();
  f.omega = 0.3;
  f.pretrain_epochs = 2;
  f.finetune_epochs = 2;
  auto job = cli::LflJobFromFlags(f, *ds, kHosts, /*phase_deadline_seconds=*/4);
  ASSERT_THAT(job, IsOk());
  job->job_id = "lfl-refused";
  if (GetParam() == "semi-honest") job->active_secagg = false;
  job->join_deadline_seconds = 4;  // the server stops waiting for Stage-1/3 reports

  cluster::ClusterOptions options;
  options.parties = 0;
  options.lfl_hosts = kHosts;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options, {}));
  for (int k = 0; k < kHosts; ++k) {
    cluster::LflHostArgs a;
    a.data_spec = kData;
    a.first = static_cast<int64_t>(job->grants[k].first_device());
    a.count = job->grants[k].count();
    // No policy flags: the default policy (max_epsilon 8, no epsilon = inf).
    ASSERT_THAT(cluster_->StartLflHost(k, a), IsOk());
  }
  auto id = cluster_->SubmitJob(net::SpecFromLflJob(*job));
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Seconds(90));
  ASSERT_THAT(st, IsOk());
  ASSERT_TRUE(st->state() == v1::JOB_STATE_FINISHED || st->state() == v1::JOB_STATE_FAILED)
      << st->state();

  // No device took part in any sum.
  for (const v1::LflIterationRecord& r : st->lfl().iterations()) {
    SCOPED_TRACE(absl::StrCat("iteration ", r.iteration()));
    EXPECT_TRUE(r.skipped());
    EXPECT_EQ(r.round1_survivors(), 0);
  }
  // No host sent metrics (it never pretrained).
  EXPECT_EQ(st->lfl().test_count(), 0);

  const std::string reason = GetParam() == "inf" ? "epsilon = inf"
                             : GetParam() == "semi-honest"
                                 ? "require_active_secagg"
                                 : "exceeds the policy cap 8 (max_epsilon)";
  for (int k = 0; k < kHosts; ++k) {
    SCOPED_TRACE(cluster::LocalCluster::LflHostName(k));
    const std::string log = cluster_->LflHostLog(k);
    EXPECT_NE(log.find("REFUSED job 'lfl-refused'"), std::string::npos) << TailOf(log, 20);
    EXPECT_NE(log.find(reason), std::string::npos) << TailOf(log, 20);
    // The ledger is empty: nothing was charged, so nothing was released.
    const std::string path = (std::filesystem::path(cluster_->work_dir()) /
                              absl::StrCat(cluster::LocalCluster::LflHostName(k), ".ledger.db"))
                                 .string();
    auto ledger = device::DeviceLedger::Open(path, {8.0, 1e-5, false});
    ASSERT_THAT(ledger, IsOk());
    auto max = (*ledger)->MaxReleases("lfl-refused");
    ASSERT_THAT(max, IsOk());
    EXPECT_EQ(*max, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Epsilon, DeviceHostRefusalTest,
                         ::testing::Values("inf", "50", "semi-honest"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return i.param == "inf"           ? std::string("NonPrivate")
                                  : i.param == "semi-honest" ? std::string("SemiHonestSecAgg")
                                                             : std::string("OverBudget");
                         });

}  // namespace
}  // namespace fedmf::it
