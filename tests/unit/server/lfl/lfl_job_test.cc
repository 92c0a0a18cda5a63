// server/lfl/lfl_job.h on its own: the LFL job's lifecycle as a pure state
// machine — no threads, no sleeps, time passed in. Hosts that announce their
// devices and report metrics but never answer a secure-aggregation phase:
// every round-1 aggregation aborts at its deadline, each iteration is
// skipped, V stays V(0), and the job still finishes after T iterations.
#include "server/lfl/lfl_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/lfl/item_matrix.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/server/lfl/lfl_test_spec.h"

namespace fedmf::server {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

constexpr int kIterations = 3;
constexpr uint64_t kSeed = 5;
const absl::Time kLflT0 = absl::FromUnixSeconds(1'700'000'000);

v1::JobSpec Spec() { return testing::TwoHostLflSpec("lfl-unit", kIterations, kSeed); }

std::unique_ptr<LflJob> NewJob() {
  auto job = LflJob::Create(Spec(), kLflT0, absl::Seconds(1));
  EXPECT_THAT(job.status(), IsOk());
  return job.ok() ? *std::move(job) : nullptr;
}

// Both hosts announced every granted device at kLflT0: Stage 1 has begun.
std::unique_ptr<LflJob> JoinedJob() {
  std::unique_ptr<LflJob> job = NewJob();
  if (job == nullptr) return nullptr;
  EXPECT_THAT(job->Hello("a", {0, 1, 2}, kLflT0), IsOk());
  EXPECT_THAT(job->Hello("b", {3, 4, 5}, kLflT0), IsOk());
  EXPECT_TRUE(job->Advance(kLflT0));
  return job;
}

v1::DeviceMetricsReport Report(int stage, double mse) {
  v1::DeviceMetricsReport r;
  r.set_job_id("lfl-unit");
  r.set_stage(stage);
  r.set_test_mse(mse);
  r.set_test_count(10);
  return r;
}

TEST(LflJobTest, JoinsWhenEveryGrantedDeviceIsAnnouncedAndDrawsTheSeededV0) {
  std::unique_ptr<LflJob> job = NewJob();
  ASSERT_NE(job, nullptr);
  ASSERT_THAT(job->Hello("a", {0, 1, 2}, kLflT0), IsOk());
  EXPECT_FALSE(job->Advance(kLflT0));  // b is missing, the deadline is far
  EXPECT_EQ(job->stage(), LflJob::Stage::kJoining);
  ASSERT_THAT(job->Hello("b", {3, 4, 5}, kLflT0), IsOk());
  EXPECT_TRUE(job->Advance(kLflT0));
  EXPECT_EQ(job->stage(), LflJob::Stage::kPretrain);
  EXPECT_EQ(job->status().registered(), 6);
  random::Csprng server = random::Csprng::FromSeed(kSeed).Fork("server");
  const mf::Matrix v0 = lfl::InitialItemMatrix(7, 3, 5, server);
  absl::StatusOr<mf::Matrix> got = job->Model("a", 0);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(*got, v0);
}

TEST(LflJobTest, AHostClaimingAnotherHostsDeviceIsRefusedNamingIt) {
  std::unique_ptr<LflJob> job = NewJob();
  ASSERT_NE(job, nullptr);
  EXPECT_THAT(job->Hello("a", {0, 4}, kLflT0),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("device 4")));
  EXPECT_EQ(job->status().registered(), 0);
}

// A message for another host's device is recorded as misbehaviour even when
// its header is stale (a phase can close while the host's stream is open);
// the host's own device under the same header is refused without blame.
TEST(LflJobTest, AForeignDeviceIsDroppedAsUnauthorizedEvenUnderAStaleHeader) {
  std::unique_ptr<LflJob> job = JoinedJob();
  ASSERT_NE(job, nullptr);
  ASSERT_EQ(job->stage(), LflJob::Stage::kPretrain);  // no aggregation open
  v1::BatchHeader stale;
  stale.set_job_id("lfl-unit");
  stale.set_phase(v1::DEVICE_PHASE_ADVERTISE_KEYS);
  v1::DeviceMessage foreign;
  foreign.set_device(4);  // host b's
  EXPECT_THAT(job->SubmitOne("a", stale, foreign),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("host 'a' is not authorized for device 4")));
  ASSERT_EQ(job->status().dropped_size(), 1);
  EXPECT_THAT(job->status().dropped(0), HasSubstr("device 4: host 'a' is not authorized"));
  v1::DeviceMessage own;
  own.set_device(0);
  EXPECT_THAT(job->SubmitOne("a", stale, own),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no aggregation open")));
  EXPECT_EQ(job->status().dropped_size(), 1);  // late, not misbehaving
}

TEST(LflJobTest, FewerThanTwoDevicesAtTheJoinDeadlineFailsTheJob) {
  std::unique_ptr<LflJob> job = NewJob();
  ASSERT_NE(job, nullptr);
  ASSERT_THAT(job->Hello("a", {0}, kLflT0), IsOk());
  EXPECT_FALSE(job->Advance(kLflT0 + absl::Seconds(29)));
  EXPECT_TRUE(job->Advance(kLflT0 + absl::Seconds(30)));
  EXPECT_EQ(job->stage(), LflJob::Stage::kFailed);
  EXPECT_THAT(job->error(), HasSubstr("only 1 devices joined"));
}

TEST(LflJobTest, MetricsReportsAreCheckedAgainstTheStage) {
  std::unique_ptr<LflJob> job = JoinedJob();
  ASSERT_NE(job, nullptr);
  ASSERT_EQ(job->stage(), LflJob::Stage::kPretrain);
  EXPECT_THAT(job->ReportMetrics("a", Report(3, 1.0)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("stage")));
  EXPECT_THAT(job->ReportMetrics("a", Report(1, -1.0)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("test_mse")));
  v1::DeviceMetricsReport foreign = Report(1, 1.0);
  foreign.set_job_id("other");
  EXPECT_THAT(job->ReportMetrics("a", foreign),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("job_id")));
  EXPECT_THAT(job->ReportMetrics("a", Report(1, 1.0)), IsOk());
  EXPECT_THAT(job->ReportMetrics("a", Report(1, 1.0)), StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST(LflJobTest, SilentHostsSkipEveryIterationAndTheJobStillFinishes) {
  std::unique_ptr<LflJob> job = JoinedJob();
  ASSERT_NE(job, nullptr);
  ASSERT_EQ(job->stage(), LflJob::Stage::kPretrain);
  const mf::Matrix v0 = job->model();
  ASSERT_THAT(job->ReportMetrics("a", Report(1, 1.5)), IsOk());
  ASSERT_THAT(job->ReportMetrics("b", Report(1, 2.5)), IsOk());
  ASSERT_TRUE(job->Advance(kLflT0));
  EXPECT_EQ(job->stage(), LflJob::Stage::kRound);
  EXPECT_DOUBLE_EQ(job->status().stage1_test_mse(), 2.0);  // pooled over 20 ratings

  // Nobody answers: each phase closes at its 10 s deadline; bounded so a
  // state machine that never leaves kRound fails the test instead of hanging.
  absl::Time now = kLflT0;
  for (int step = 0; step < 100 && job->stage() == LflJob::Stage::kRound; ++step) {
    now += absl::Seconds(10);
    job->Advance(now);
  }
  ASSERT_EQ(job->stage(), LflJob::Stage::kFinish) << job->error();
  const std::vector<v1::LflIterationRecord> records = job->TakeFinishedIterations();
  ASSERT_EQ(records.size(), static_cast<size_t>(kIterations));
  for (int t = 0; t < kIterations; ++t) {
    EXPECT_EQ(records[t].iteration(), t);
    EXPECT_TRUE(records[t].skipped());
    EXPECT_EQ(records[t].round1_survivors(), 0);
  }
  EXPECT_TRUE(job->TakeFinishedIterations().empty());  // handed out once
  EXPECT_EQ(job->model(), v0);                         // nothing was learned, nothing stepped

  ASSERT_THAT(job->ReportMetrics("a", Report(3, 1.0)), IsOk());
  EXPECT_FALSE(job->Advance(now));  // b has not reported, the deadline is far
  ASSERT_THAT(job->ReportMetrics("b", Report(3, 3.0)), IsOk());
  EXPECT_TRUE(job->Advance(now));
  EXPECT_EQ(job->stage(), LflJob::Stage::kFinished);
  EXPECT_DOUBLE_EQ(job->status().test_mse(), 2.0);
}

}  // namespace
}  // namespace fedmf::server
