// server/lfl/lfl_coordinator.h: the lock, long-poll and persistence wrapper
// around LflJob (whose protocol lfl_job_test.cc covers). Hosts are driven
// in-process against a real SQLite store; waits are the coordinator's own
// long polls, never sleeps.
#include "server/lfl/lfl_coordinator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/unit/server/lfl/lfl_test_spec.h"

namespace fedmf::server {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

v1::JobSpec Spec(const std::string& id) { return testing::TwoHostLflSpec(id, 2, 5); }

v1::HostHello Hello(const std::string& host, uint64_t first) {
  v1::HostHello h;
  h.set_host(host);
  for (uint64_t d = first; d < first + 3; ++d) h.add_devices(d);
  return h;
}

class LflCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = LflStore::Open(dir_ + "/s.db");
    ASSERT_THAT(store.status(), IsOk());
    store_ = *std::move(store);
  }
  void TearDown() override {
    coordinator_.reset();
    store_.reset();
  }
  void StartCoordinator() {
    coordinator_ = std::make_unique<LflCoordinator>(
        store_.get(), LflCoordinatorOptions{absl::Milliseconds(200), absl::Seconds(5), {}});
    ASSERT_THAT(coordinator_->Start(), IsOk());
  }
  // Long-polls as `host` until its task is not IDLE (bounded).
  v1::DeviceTask WaitTask(const std::string& host, uint64_t first) {
    for (int i = 0; i < 50; ++i) {
      auto t = coordinator_->GetTask(host, Hello(host, first));
      EXPECT_THAT(t.status(), IsOk());
      if (!t.ok() || t->kind() != v1::DEVICE_TASK_KIND_IDLE) return t.ok() ? *t : v1::DeviceTask();
    }
    ADD_FAILURE() << host << " never got a task";
    return v1::DeviceTask();
  }

  const ::fedmf::testing::ScopedTempDir tmp_{"fedmf-lflc-"};
  const std::string dir_ = tmp_.path();
  std::unique_ptr<LflStore> store_;
  std::unique_ptr<LflCoordinator> coordinator_;
};

TEST_F(LflCoordinatorTest, AJobLeftRunningByAPreviousServerIsFailedAtStart) {
  ASSERT_THAT(store_->CreateJob(Spec("old")), IsOk());
  ASSERT_THAT(store_->SaveJob("old", v1::JOB_STATE_RUNNING, "", v1::LflStatus()), IsOk());
  StartCoordinator();
  auto st = coordinator_->GetJob("old");
  ASSERT_THAT(st.status(), IsOk());
  EXPECT_EQ(st->state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(st->error(), HasSubstr("do not resume"));
  auto running = store_->RunningJobs();
  ASSERT_THAT(running.status(), IsOk());
  EXPECT_TRUE(running->empty());
}

TEST_F(LflCoordinatorTest, OneActiveJobAtATimeAndItsStagesArePersisted) {
  StartCoordinator();
  ASSERT_THAT(coordinator_->SubmitJob(Spec("first")).status(), IsOk());
  EXPECT_THAT(coordinator_->SubmitJob(Spec("second")).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("'first' is still")));
  auto waiting = store_->LoadJob("first");
  ASSERT_THAT(waiting.status(), IsOk());
  EXPECT_EQ(waiting->state(), v1::JOB_STATE_WAITING);

  // A host announcing a device granted to the other is refused, naming it.
  EXPECT_THAT(coordinator_->GetTask("a", Hello("a", 3)).status(),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // Both hosts announce their devices: the job joins and Stage 1 starts,
  // which the store sees as RUNNING.
  ASSERT_THAT(coordinator_->GetTask("a", Hello("a", 0)).status(), IsOk());
  const v1::DeviceTask b = WaitTask("b", 3);
  EXPECT_EQ(b.job_id(), "first");
  EXPECT_NE(b.kind(), v1::DEVICE_TASK_KIND_IDLE);
  auto running = store_->LoadJob("first");
  ASSERT_THAT(running.status(), IsOk());
  EXPECT_EQ(running->state(), v1::JOB_STATE_RUNNING);
  auto live = coordinator_->GetJob("");
  ASSERT_THAT(live.status(), IsOk());
  EXPECT_EQ(live->spec().job_id(), "first");
  EXPECT_EQ(live->lfl().registered(), 6);
  auto ids = coordinator_->JobIds();
  ASSERT_THAT(ids.status(), IsOk());
  EXPECT_THAT(*ids, ::testing::ElementsAre("first"));
}

TEST_F(LflCoordinatorTest, MessagesForAnotherJobAreRefusedAsNotActive) {
  StartCoordinator();
  ASSERT_THAT(coordinator_->SubmitJob(Spec("j")).status(), IsOk());
  EXPECT_THAT(coordinator_->Model("a", "other", 0).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("'other'")));
  v1::BatchHeader header;
  header.set_job_id("other");
  EXPECT_THAT(coordinator_->CheckBatch("a", header),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(coordinator_->GetJob("missing").status(), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(LflCoordinatorTest, StopEndsAHostsLongPollAndTheRunner) {
  StartCoordinator();
  // No job: the poll returns IDLE at its end, and Stop joins the runner.
  auto t = coordinator_->GetTask("a", Hello("a", 0));
  ASSERT_THAT(t.status(), IsOk());
  EXPECT_EQ(t->kind(), v1::DEVICE_TASK_KIND_IDLE);
  coordinator_->Stop();
  auto after = coordinator_->GetTask("a", Hello("a", 0));
  ASSERT_THAT(after.status(), IsOk());
  EXPECT_EQ(after->kind(), v1::DEVICE_TASK_KIND_IDLE);
}

}  // namespace
}  // namespace fedmf::server
