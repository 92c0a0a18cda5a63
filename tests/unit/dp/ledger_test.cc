#include "common/dp/ledger.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::dp {
namespace {

LedgerEntry Entry(std::string job, int64_t round, double q = 0.01, double z = 1.1,
                  int64_t steps = 100) {
  return LedgerEntry{std::move(job), round, q, z, steps};
}

TEST(LedgerTest, StartsEmpty) {
  PrivacyLedger ledger(2.0, 1e-5);
  EXPECT_EQ(*ledger.SpentEpsilon(), 0.0);
  EXPECT_TRUE(ledger.entries().empty());
  EXPECT_EQ(ledger.max_epsilon(), 2.0);
  EXPECT_EQ(ledger.delta(), 1e-5);
}

TEST(LedgerTest, ChargesComposeInRdp) {
  PrivacyLedger ledger(5.0, 1e-5);
  ASSERT_THAT(ledger.Charge(Entry("job-a", 0)), IsOk());
  ASSERT_THAT(ledger.Charge(Entry("job-a", 1, 0.02, 1.5, 50)), IsOk());
  ASSERT_THAT(ledger.Charge(Entry("job-b", 0)), IsOk());
  EXPECT_EQ(ledger.entries().size(), 3u);
  RdpAccountant expected;
  expected.AddSteps(0.01, 1.1, 100);
  expected.AddSteps(0.02, 1.5, 50);
  expected.AddSteps(0.01, 1.1, 100);
  EXPECT_NEAR(*ledger.SpentEpsilon(), expected.GetEpsilon(1e-5)->epsilon, 1e-12);
  // RDP composition is tighter than summing per-charge epsilons.
  const double a = *ComputeEpsilon(0.01, 1.1, 100, 1e-5);
  const double b = *ComputeEpsilon(0.02, 1.5, 50, 1e-5);
  EXPECT_LT(*ledger.SpentEpsilon(), 2 * a + b);
}

TEST(LedgerTest, JobEpsilonComposesOnlyThatJobsEntries) {
  PrivacyLedger ledger(5.0, 1e-5);
  EXPECT_EQ(*ledger.JobEpsilon("job-a"), 0.0);
  ASSERT_THAT(ledger.Charge(Entry("job-a", 0)), IsOk());
  ASSERT_THAT(ledger.Charge(Entry("job-b", 0, 0.01, 1.5, 100)), IsOk());
  ASSERT_THAT(ledger.Charge(Entry("job-a", 1, 0.02, 1.5, 50)), IsOk());
  RdpAccountant a;
  a.AddSteps(0.01, 1.1, 100);
  a.AddSteps(0.02, 1.5, 50);
  EXPECT_NEAR(*ledger.JobEpsilon("job-a"), a.GetEpsilon(1e-5)->epsilon, 1e-12);
  EXPECT_NEAR(*ledger.JobEpsilon("job-b"), *ComputeEpsilon(0.01, 1.5, 100, 1e-5), 1e-12);
  EXPECT_LT(*ledger.JobEpsilon("job-a"), *ledger.SpentEpsilon());
  EXPECT_EQ(*ledger.JobEpsilon("job-c"), 0.0);
}

TEST(LedgerTest, EpsilonWithDoesNotCharge) {
  PrivacyLedger ledger(5.0, 1e-5);
  const double with = *ledger.EpsilonWith(Entry("j", 0));
  EXPECT_GT(with, 0);
  EXPECT_EQ(*ledger.SpentEpsilon(), 0.0);
  ASSERT_THAT(ledger.Charge(Entry("j", 0)), IsOk());
  EXPECT_DOUBLE_EQ(*ledger.SpentEpsilon(), with);
}

TEST(LedgerTest, OverBudgetIsRefusedAndLeavesStateUnchanged) {
  const double one = *ComputeEpsilon(0.05, 1.0, 200, 1e-5);
  // RDP composes sub-linearly (two charges cost ~1.38x one), so 1.2x one
  // admits exactly one charge.
  PrivacyLedger ledger(1.2 * one, 1e-5);
  ASSERT_THAT(ledger.Charge(Entry("job", 0, 0.05, 1.0, 200)), IsOk());
  const double spent = *ledger.SpentEpsilon();
  absl::Status s = ledger.Charge(Entry("job", 1, 0.05, 1.0, 200));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  // The message names the budget and the would-be spend.
  const std::string msg(s.message());
  EXPECT_NE(msg.find("budget"), std::string::npos) << msg;
  EXPECT_NE(msg.find("job"), std::string::npos) << msg;
  const double would_be = *ledger.EpsilonWith(Entry("job", 1, 0.05, 1.0, 200));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", would_be);
  EXPECT_NE(msg.find(buf), std::string::npos) << msg << " lacks " << buf;
  std::snprintf(buf, sizeof(buf), "%.6g", 1.2 * one);
  EXPECT_NE(msg.find(buf), std::string::npos) << msg << " lacks " << buf;
  // Unchanged: same entries, same spend, and the refused round is still free.
  EXPECT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(*ledger.SpentEpsilon(), spent);
  EXPECT_THAT(ledger.Charge(Entry("job", 1, 0.05, 50.0, 1)), IsOk());
}

TEST(LedgerTest, RepeatedJobRoundIsAlreadyExists) {
  PrivacyLedger ledger(100.0, 1e-5);
  ASSERT_THAT(ledger.Charge(Entry("job", 3)), IsOk());
  const double spent = *ledger.SpentEpsilon();
  absl::Status s = ledger.Charge(Entry("job", 3, 0.001, 10.0, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(*ledger.SpentEpsilon(), spent);
  EXPECT_THAT(ledger.Charge(Entry("other-job", 3)), IsOk());
  EXPECT_THAT(ledger.Charge(Entry("job", 4)), IsOk());
}

TEST(LedgerTest, NoNoiseIsRefusedByBudget) {
  PrivacyLedger ledger(100.0, 1e-5);
  absl::Status s = ledger.Charge(Entry("job", 0, 0.01, 0.0, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(std::string(s.message()).find("inf"), std::string::npos) << s;
}

TEST(LedgerTest, InvalidEntriesAndBudgets) {
  PrivacyLedger ledger(1.0, 1e-5);
  EXPECT_EQ(ledger.Charge(Entry("", 0)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Charge(Entry("j", -1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Charge(Entry("j", 0, 1.5)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Charge(Entry("j", 0, 0.1, -1.0)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Charge(Entry("j", 0, 0.1, 1.0, -5)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ledger.entries().empty());
  PrivacyLedger bad_delta(1.0, 0.0);
  EXPECT_EQ(bad_delta.Charge(Entry("j", 0)).code(), absl::StatusCode::kInvalidArgument);
  PrivacyLedger bad_budget(std::nan(""), 1e-5);
  EXPECT_EQ(bad_budget.Charge(Entry("j", 0)).code(), absl::StatusCode::kInvalidArgument);
}

// Per-rating and per-user charges are composed apart and never added into one
// epsilon (issue #54): each unit's epsilon is that of its own charges alone,
// the budget caps each unit, and an unrecorded charge counts in both.
TEST(LedgerTest, UnitsAreComposedApart) {
  PrivacyLedger ledger(3.0, 1e-5);
  LedgerEntry user = Entry("hfl", 0, 0.01, 1.1, 1000);
  user.unit = LedgerUnit::kUser;
  LedgerEntry rating = Entry("vfl", 0, 0.01, 1.1, 1000);
  rating.unit = LedgerUnit::kRating;
  ASSERT_THAT(ledger.Charge(user), IsOk());
  const double one = *ledger.SpentEpsilon(LedgerUnit::kUser);
  EXPECT_GT(one, 0);
  EXPECT_EQ(*ledger.SpentEpsilon(LedgerUnit::kRating), 0.0);
  ASSERT_THAT(ledger.Charge(rating), IsOk());
  // The same mechanism in the other unit: each unit holds exactly one.
  EXPECT_DOUBLE_EQ(*ledger.SpentEpsilon(LedgerUnit::kRating), one);
  EXPECT_DOUBLE_EQ(*ledger.SpentEpsilon(LedgerUnit::kUser), one);
  EXPECT_DOUBLE_EQ(*ledger.SpentEpsilon(), one);  // the larger, not the composition
  RdpAccountant both;
  both.AddSteps(0.01, 1.1, 2000);
  EXPECT_LT(one, both.GetEpsilon(1e-5)->epsilon);
  // An unrecorded charge (a migrated ledger) lands in both units.
  LedgerEntry old = Entry("old", 0, 0.01, 1.1, 1000);
  ASSERT_THAT(ledger.Restore(old), IsOk());
  EXPECT_DOUBLE_EQ(*ledger.SpentEpsilon(LedgerUnit::kRating), both.GetEpsilon(1e-5)->epsilon);
  EXPECT_DOUBLE_EQ(*ledger.SpentEpsilon(LedgerUnit::kUser), both.GetEpsilon(1e-5)->epsilon);
}

}  // namespace
}  // namespace fedmf::dp
