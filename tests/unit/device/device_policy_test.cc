// A device host's policy and ledger: what the server cannot make a device do.
#include "client-device/device_policy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>

#include "client-device/device_ledger.h"
#include "client-device/hua_role.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::device {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(DevicePolicyTest, DefaultsRefuseNonPrivateAndOverCapJobs) {
  const DevicePolicy p;
  EXPECT_FALSE(p.allow_non_private);
  EXPECT_FALSE(p.report_metrics);
  EXPECT_EQ(DevicePolicyRefusal(p, "lfl", 1.0, 1e-5, 10), "");
  EXPECT_NE(DevicePolicyRefusal(p, "lfl", kInf, 1e-5, 10).find("epsilon = inf"), std::string::npos);
  EXPECT_NE(DevicePolicyRefusal(p, "lfl", 8.5, 1e-5, 10).find("exceeds the policy cap 8"),
            std::string::npos);
  EXPECT_NE(DevicePolicyRefusal(p, "lfl", 1.0, 1e-3, 10).find("delta"), std::string::npos);
  EXPECT_NE(DevicePolicyRefusal(p, "lfl", 1.0, 1e-5, 1001).find("max_iterations"),
            std::string::npos);
  EXPECT_NE(DevicePolicyRefusal(p, "hfl", 1.0, 1e-5, 10).find("not allowed"), std::string::npos);
  EXPECT_NE(DevicePolicyRefusal(p, "lfl", std::nan(""), 1e-5, 10), "");
  DevicePolicy open = p;
  open.allow_non_private = true;
  EXPECT_EQ(DevicePolicyRefusal(open, "lfl", kInf, 1e-5, 10), "");
}

TEST(DevicePolicyTest, IterationBeyondTOrThePolicyIsRefused) {
  DevicePolicy p;
  p.max_iterations = 5;
  EXPECT_EQ(IterationRefusal(p, 0, 4), "");
  EXPECT_EQ(IterationRefusal(p, 3, 4), "");
  EXPECT_NE(IterationRefusal(p, 4, 4).find("outside the job's 0..3"), std::string::npos);
  EXPECT_NE(IterationRefusal(p, -1, 4), "");
  EXPECT_NE(IterationRefusal(p, 5, 10).find("max_iterations 5"), std::string::npos);
}

TEST(DevicePolicyTest, RatingRangeMustBeTheHostsOwn) {
  EXPECT_EQ(RatingRangeRefusal({1, 5}, 1, 5), "");
  EXPECT_NE(RatingRangeRefusal({1, 5}, 1, 1).find("not the host's declared range [1, 5]"),
            std::string::npos);
  EXPECT_NE(RatingRangeRefusal({-5, 5}, 0, 5), "");
}

TEST(DevicePolicyTest, YamlPolicyParsesAndNamesBadKeys) {
  auto p = ParseDevicePolicy(
      "max_epsilon: 2\ndelta: 1e-6\nallowed_settings: [lfl]\nmax_iterations: 20\n"
      "report_metrics: true\n",
      "policy.yaml");
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->max_epsilon, 2);
  EXPECT_EQ(p->delta, 1e-6);
  EXPECT_EQ(p->allowed_settings, std::vector<std::string>{"lfl"});
  EXPECT_EQ(p->max_iterations, 20);
  EXPECT_TRUE(p->report_metrics);
  EXPECT_FALSE(p->allow_non_private);
  auto typo = ParseDevicePolicy("max_epsilom: 2\n", "policy.yaml");
  ASSERT_THAT(typo, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(typo.status().message().find("max_epsilom"), std::string::npos) << typo.status();
  auto inf = ParseDevicePolicy("max_epsilon: .inf\n", "policy.yaml");
  ASSERT_THAT(inf, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(inf.status().message().find("max_epsilon"), std::string::npos) << inf.status();
}

class DeviceLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("device_ledger_" + std::to_string(::getpid()) + ".db"))
                .string();
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(DeviceLedgerTest, ChargeRefusesBeyondTheBudget) {
  // z such that 4 releases cost exactly 2: the 5th must be refused.
  auto z = dp::CalibrateNoiseMultiplier(1.0, 4, 1e-5, 2.0);
  ASSERT_THAT(z, IsOk());
  auto ledger = DeviceLedger::Open(path_, {2.0, 1e-5, false});
  ASSERT_THAT(ledger, IsOk());
  for (int t = 0; t < 4; ++t) {
    auto c = (*ledger)->Charge({1, 2}, "job", t, *z);
    ASSERT_THAT(c, IsOk());
    EXPECT_EQ(*c, (std::vector<uint64_t>{1, 2})) << "iteration " << t;
  }
  auto fifth = (*ledger)->Charge({1, 2, 3}, "job", 4, *z);
  ASSERT_THAT(fifth, IsOk());
  EXPECT_EQ(*fifth, std::vector<uint64_t>{3});  // device 3 has spent nothing yet
  EXPECT_EQ(*(*ledger)->Releases(1, "job"), 4);
  // Another job draws on the same budget (it is the device's, not the job's).
  auto other = (*ledger)->Charge({1}, "job-2", 0, *z);
  ASSERT_THAT(other, IsOk());
  EXPECT_TRUE(other->empty());
  auto eps = (*ledger)->EpsilonIf(1, *z, 0);
  ASSERT_THAT(eps, IsOk());
  EXPECT_LE(*eps, 2.0 * (1 + 1e-9));
  EXPECT_GT(*eps, 1.9);
  auto planned = (*ledger)->EpsilonIf(3, *z, 4);
  ASSERT_THAT(planned, IsOk());
  EXPECT_GT(*planned, 2.0);  // 1 spent + 4 planned > 4 releases' 2.0
}

TEST_F(DeviceLedgerTest, ReleaseWithoutNoiseIsRefusedUnlessAllowed) {
  {
    auto ledger = DeviceLedger::Open(path_, {8.0, 1e-5, false});
    ASSERT_THAT(ledger, IsOk());
    auto c = (*ledger)->Charge({1}, "inf-job", 0, 0.0);
    ASSERT_THAT(c, IsOk());
    EXPECT_TRUE(c->empty());
    EXPECT_EQ(*(*ledger)->Releases(1, "inf-job"), 0);
  }
  auto ledger = DeviceLedger::Open(path_, {8.0, 1e-5, true});
  ASSERT_THAT(ledger, IsOk());
  auto c = (*ledger)->Charge({1}, "inf-job", 0, 0.0);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(*c, std::vector<uint64_t>{1});
  // After a release without noise the device's epsilon is infinite: no
  // private job fits its budget any more.
  EXPECT_TRUE(std::isinf(*(*ledger)->EpsilonIf(1, 1.0, 1)));
  auto d = (*ledger)->Charge({1}, "private-job", 0, 5.0);
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->empty());
}

}  // namespace
}  // namespace fedmf::device

namespace fedmf::device {
namespace {

// A Hua S3 user receiving a v_j of 1e12: without the projection the term
// -2 u (r - u^T v) overflows the Z_P codec and the user fails to report (a
// failure that depends on its rating); with it the report is produced.
TEST(HuaUserRoleTest, HugeReceivedItemRowIsProjectedBeforeTheGradient) {
  hua::HuaParams p;
  p.scenario = hua::Scenario::kDynamic;
  p.dim = 3;
  p.epsilon = 1;
  HuaLocalUser u;
  u.user = 4;
  u.train = {{2, 5.0}};
  std::vector<HuaLocalUser> users{u};
  auto role = HuaUserRole::Create(p, {1, 5}, std::move(users), 9);
  ASSERT_THAT(role, IsOk());
  hua::IterationRequest req;
  req.iteration = 1;
  req.user = 4;
  hua::ItemRequest it;
  it.item = 2;
  it.v = {1e12, 1e12, 1e12};
  it.rho_users = 1;
  it.h_rho = {1, 1, 1};
  it.mask = {0, 0, 0};
  req.items.push_back(it);
  auto report = (*role)->HandleIteration(req);
  ASSERT_THAT(report, IsOk());
  ASSERT_EQ(report->items.size(), 1u);
  EXPECT_LE(HuaUserRole::MaxItemNorm(p), p.zp.max_abs / 8);
}

}  // namespace
}  // namespace fedmf::device
