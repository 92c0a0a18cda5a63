// The server's Hua runner (server/hua/hua_runner): the thread that carries the
// pure HuaS3Job's actions to the aggregator with the lock released. A fake
// aggregator link lets the tests fail or throw where the real one would:
// an aggregator error is retried, an allocation failure inside the link fails
// that job only (the runner re-takes its lock and keeps serving), and hosts
// polling learn of it at once.
#include "server/hua/hua_runner.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "common/hua/wire/hua_codec.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::server {
namespace {

// What every link the factory made has seen, and what the next Begin does.
struct LinkScript {
  absl::Mutex mu;
  int begins ABSL_GUARDED_BY(mu) = 0;
  int fail_begins ABSL_GUARDED_BY(mu) = 0;  // the next N Begins return UNAVAILABLE
  bool throw_bad_alloc ABSL_GUARDED_BY(mu) = false;
  bool throw_length_error ABSL_GUARDED_BY(mu) = false;  // what a vector of a hostile size throws
};

class FakeLink : public AggregatorLink {
 public:
  explicit FakeLink(LinkScript* script) : script_(script) {}
  absl::Status Begin(const std::string&, int32_t, const hua::AggregationPlan&,
                     const std::map<int32_t, std::string>&) override {
    absl::MutexLock lock(&script_->mu);
    ++script_->begins;
    if (script_->throw_bad_alloc) {
      script_->throw_bad_alloc = false;
      throw std::bad_alloc();
    }
    if (script_->throw_length_error) {
      script_->throw_length_error = false;
      throw std::length_error("vector::_M_default_append");
    }
    if (script_->fail_begins > 0) {
      --script_->fail_begins;
      return absl::UnavailableError("aggregator down");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<hua::AggregateForward> Flush(const std::string&, int32_t, hua::Phase, int32_t,
                                              int32_t) override {
    return absl::UnavailableError("not in these tests");
  }
  absl::Status EndJob(const std::string&) override { return absl::OkStatus(); }

 private:
  LinkScript* script_;
};

v1::JobSpec Spec() {
  net::HuaJob job;
  job.params.scenario = hua::Scenario::kDynamic;
  job.params.dim = 3;
  job.params.iterations = 2;
  job.params.epsilon = std::numeric_limits<double>::infinity();
  job.params.join_prob = 0.3;
  job.params.leave_prob = 0.2;
  job.params.initial_online = 1.0;
  job.params.max_online = 4;
  job.range = {1, 5};
  job.num_items = 6;
  job.has_seed = true;
  job.seed = 7;
  v1::JobSpec spec = net::SpecFromHuaJob(job);
  spec.mutable_hua()->set_aggregator("fake:1");
  spec.mutable_hua()->set_expected_users(2);
  v1::DeviceGrant* g = spec.mutable_hua()->add_grants();
  g->set_host("a");
  g->set_first_device(0);
  g->set_count(2);
  return spec;
}

class HuaRunnerTest : public ::testing::Test {
 protected:
  HuaRunnerTest() {
    HuaRunnerOptions o;
    o.poll = absl::Seconds(30);  // a poll returns on a change, long before this
    o.aggregator_retry = absl::Milliseconds(5);
    runner_ = std::make_unique<HuaRunner>(o, [this](const std::string&) {
      return absl::StatusOr<std::unique_ptr<AggregatorLink>>(std::make_unique<FakeLink>(&script_));
    });
  }
  ~HuaRunnerTest() override { runner_->Stop(); }

  // Submits a job and registers its two users from host "a".
  std::string SubmitAndRegister() {
    auto id = runner_->SubmitJob(Spec());
    EXPECT_THAT(id, IsOk());
    auto n = runner_->Register("a", *id, {{0, {1, 2}}, {1, {3}}});
    EXPECT_THAT(n, IsOk());
    return *id;
  }

  // Runs a first job whose link's Begin throws (script_ says what), and
  // checks that the host's long poll returns with the abort as soon as the
  // job fails, with an error containing `error_part`.
  void ExpectTheFirstJobFails(const std::string& error_part) {
    ASSERT_THAT(runner_->Start(), IsOk());
    const std::string first = SubmitAndRegister();
    auto tasks = runner_->Poll("a", first);
    ASSERT_THAT(tasks, IsOk());
    EXPECT_EQ(tasks->kind(), v1::HUA_TASK_KIND_ABORT);
    auto st = runner_->GetJob(first);
    ASSERT_THAT(st, IsOk());
    EXPECT_EQ(st->state(), v1::JOB_STATE_FAILED);
    EXPECT_TRUE(absl::StrContains(st->error(), error_part)) << st->error();
  }
  // The next job gets its hosts their first task.
  void ExpectTheNextJobRuns() {
    const std::string second = SubmitAndRegister();
    auto next = runner_->Poll("a", second);
    ASSERT_THAT(next, IsOk());
    EXPECT_NE(next->kind(), v1::HUA_TASK_KIND_ABORT) << next->reason();
    EXPECT_NE(next->kind(), v1::HUA_TASK_KIND_IDLE);
  }

  LinkScript script_;
  std::unique_ptr<HuaRunner> runner_;
};

TEST_F(HuaRunnerTest, AnAllocationFailureInTheLinkFailsThatJobAndTheRunnerServesTheNext) {
  {
    absl::MutexLock lock(&script_.mu);
    script_.throw_bad_alloc = true;
  }
  ExpectTheFirstJobFails("ran out of memory");
  // The next job: the aggregator is down twice, then up; the runner retries
  // Begin and the host gets its first task.
  {
    absl::MutexLock lock(&script_.mu);
    script_.fail_begins = 2;
  }
  ExpectTheNextJobRuns();
  absl::MutexLock lock(&script_.mu);
  EXPECT_EQ(script_.begins, 1 + 3);  // the throwing one, two refused, one accepted
}

// std::length_error (a size too large for a container) is an allocation
// failure too: it fails that job, not the daemon (the runner's loop once
// caught only std::bad_alloc).
TEST_F(HuaRunnerTest, ALengthErrorInTheLinkFailsThatJobAndTheRunnerServesTheNext) {
  {
    absl::MutexLock lock(&script_.mu);
    script_.throw_length_error = true;
  }
  ExpectTheFirstJobFails("cannot allocate this job's state: vector::_M_default_append");
  ExpectTheNextJobRuns();
}

TEST_F(HuaRunnerTest, StopReturnsWhileAHostIsPolling) {
  ASSERT_THAT(runner_->Start(), IsOk());
  const std::string id = SubmitAndRegister();
  runner_->Stop();  // joins the runner thread; a poll after it returns at once
  auto tasks = runner_->Poll("a", id);
  EXPECT_THAT(tasks, IsOk());
}

}  // namespace
}  // namespace fedmf::server
