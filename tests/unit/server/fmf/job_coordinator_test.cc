// The server's job lifecycle without gRPC: parties are driven in-process.
#include "server/fmf/job_coordinator.h"

#include <stdlib.h>

#include <cmath>
#include <optional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "common/fmf/wire/job_codec.h"
#include "common/net/job_view.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::server {
namespace {

class JobCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void TearDown() override {
    coordinator_.reset();
    store_.reset();
  }
  void Open() {
    auto store = ServerStore::Open(dir_ + "/s.db");
    ASSERT_THAT(store, IsOk());
    store_ = std::move(*store);
    CoordinatorOptions o;
    o.poll = absl::Milliseconds(100);
    o.liveness = liveness_;
    o.offer_deadline = absl::Seconds(5);
    o.finish_deadline = absl::Seconds(5);
    o.allowed_parties = allowed_;
    o.clock = clock_;
    coordinator_ = std::make_unique<JobCoordinator>(store_.get(), o);
    ASSERT_THAT(coordinator_->Start(), IsOk());
  }

  v1::JobSpec Spec(int rounds) {
    fmf::JobConfig c;
    c.job_id = "j";
    c.setting = fmf::Setting::kHfl;
    c.split = fmf::SplitKind::kHorizontal;
    c.rounds = rounds;
    c.dim = 2;
    v1::JobSpec s = net::SpecFromJobConfig(c);
    s.add_roster("a");
    s.add_roster("b");
    s.set_round_deadline_seconds(10);
    return s;
  }

  // Polls (long-poll, event driven) until the party's task has `kind`.
  v1::Task WaitTask(const std::string& party, v1::TaskKind kind) {
    for (int i = 0; i < 100; ++i) {
      v1::Task t = coordinator_->GetTask(party);
      if (t.kind() == kind) return t;
    }
    ADD_FAILURE() << "party " << party << " never got task " << v1::TaskKind_Name(kind);
    return v1::Task();
  }

  void Accept(const std::string& party, int users, const std::string& job_id = "j") {
    v1::OfferReply r;
    r.set_party(party);
    r.set_job_id(job_id);
    r.set_accept(true);
    r.set_users(users);
    r.set_items(3);
    r.set_global_users(10);
    r.set_global_items(3);
    ASSERT_THAT(coordinator_->ReplyOffer(party, r), IsOk());
  }

  const ::fedmf::testing::ScopedTempDir tmp_{"fedmf-coord-"};
  const std::string dir_ = tmp_.path();
  absl::Duration liveness_ = absl::Seconds(5);
  std::vector<std::string> allowed_;
  // Protocol time: the real clock, or fake_clock_ for tests of liveness
  // windows (they move time instead of sleeping through it).
  const Clock* clock_ = nullptr;
  FakeClock fake_clock_;
  std::unique_ptr<ServerStore> store_;
  std::unique_ptr<JobCoordinator> coordinator_;
};

TEST_F(JobCoordinatorTest, FullLifecycleWithWeightedAverage) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(2)), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 2);
  Accept("b", 6);
  for (int t = 0; t < 2; ++t) {
    v1::Task ta = WaitTask("a", v1::TASK_KIND_ROUND);
    EXPECT_EQ(ta.round(), t);
    auto shared = coordinator_->SharedFor("a", "j", t);
    ASSERT_THAT(shared, IsOk());
    EXPECT_EQ((*shared)->rows(), 3);
    ASSERT_THAT(coordinator_->SubmitUpdate("a", "j", t, mf::Matrix::Constant(3, 2, 0.2)), IsOk());
    // A second upload for the same round is refused.
    EXPECT_EQ(coordinator_->SubmitUpdate("a", "j", t, mf::Matrix::Constant(3, 2, 0.2)).code(),
              absl::StatusCode::kAlreadyExists);
    WaitTask("b", v1::TASK_KIND_ROUND);
    ASSERT_THAT(coordinator_->SubmitUpdate("b", "j", t, mf::Matrix::Constant(3, 2, 0.6)), IsOk());
  }
  v1::Task fin = WaitTask("a", v1::TASK_KIND_FINISH);
  EXPECT_EQ(fin.round(), 2);
  auto final_shared = coordinator_->SharedFor("a", "j", 2);
  ASSERT_THAT(final_shared, IsOk());
  // (2 * 0.2 + 6 * 0.6) / 8 = 0.5, up to the float32 precision it is released at.
  EXPECT_NEAR((**final_shared)(1, 1), 0.5, 1e-7);
  for (const std::string p : {"a", "b"}) {
    v1::PrivacyReport r;
    r.set_party(p);
    r.set_job_id("j");
    r.set_epsilon_spent(0.5);
    r.set_finished(true);
    r.set_test_mse(0.9);
    r.set_test_count(10);
    ASSERT_THAT(coordinator_->ReportPrivacy(p, r), IsOk());
  }
  for (int i = 0; i < 100; ++i) {
    auto st = coordinator_->GetJob("j");
    ASSERT_THAT(st, IsOk());
    if (st->state() == v1::JOB_STATE_FINISHED) {
      EXPECT_EQ(st->rounds_size(), 2);
      EXPECT_EQ(st->parties(1).test_mse(), 0.9);
      return;
    }
    coordinator_->GetTask("a");  // a bounded wait for the next state change
  }
  FAIL() << "job never finished";
}

// Issue 56, item 7: a party that refuses a job shows its ledger's epsilon
// as it last reported it (here to the job before), not 0; and once the job
// has failed, a party that never answered is not "pending".
TEST_F(JobCoordinatorTest, ARefusalShowsTheLedgerAndAFailedJobHasNoPendingParty) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(1)), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 2);
  Accept("b", 6);
  WaitTask("a", v1::TASK_KIND_ROUND);
  ASSERT_THAT(coordinator_->SubmitUpdate("a", "j", 0, mf::Matrix::Constant(3, 2, 0.2)), IsOk());
  WaitTask("b", v1::TASK_KIND_ROUND);
  ASSERT_THAT(coordinator_->SubmitUpdate("b", "j", 0, mf::Matrix::Constant(3, 2, 0.6)), IsOk());
  WaitTask("b", v1::TASK_KIND_FINISH);
  for (const std::string p : {"a", "b"}) {
    v1::PrivacyReport r;
    r.set_party(p);
    r.set_job_id("j");
    r.set_epsilon_spent(p == "b" ? 0.75 : 0.5);
    r.set_finished(true);
    ASSERT_THAT(coordinator_->ReportPrivacy(p, r), IsOk());
  }
  v1::JobSpec second = Spec(1);
  second.set_job_id("j2");
  ASSERT_THAT(coordinator_->SubmitJob(second), IsOk());
  WaitTask("b", v1::TASK_KIND_OFFER);
  v1::OfferReply no;
  no.set_party("b");
  no.set_job_id("j2");
  no.set_accept(false);
  no.set_refusal("over budget");
  ASSERT_THAT(coordinator_->ReplyOffer("b", no), IsOk());
  for (int i = 0; i < 200; ++i) {
    auto st = coordinator_->GetJob("j2");
    ASSERT_THAT(st, IsOk());
    const v1::PartyStatus& b = st->parties(1);
    ASSERT_EQ(b.name(), "b");
    EXPECT_DOUBLE_EQ(b.epsilon_spent(), 0.75);
    EXPECT_EQ(net::PartyWord(*st, b), "refused: over budget");
    if (st->state() == v1::JOB_STATE_FAILED) {
      // a never answered before the offer deadline.
      EXPECT_EQ(net::PartyWord(*st, st->parties(0)), "no answer (the job failed)");
      // `job list` writes the setting as job files do.
      EXPECT_EQ(net::SettingWord(st->spec().setting()), "hfl");
      EXPECT_EQ(net::SettingWord(v1::SETTING_HFL_SYNSGD), "hfl-synsgd");
      return;
    }
    coordinator_->GetTask("b");  // a bounded wait for the next state change
  }
  FAIL() << "job j2 never failed";
}

// GetJobRequest's long poll: a watcher of rounds is answered when a round
// closes, a watcher of the state alone only when the state changes (here:
// the job finishes), each long before its 20 s wait; a job the coordinator
// is not running is answered at once.
TEST_F(JobCoordinatorTest, AJobWatchIsAnsweredWhenARoundClosesOrTheStateChanges) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(2)), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 2);
  Accept("b", 6);
  WaitTask("a", v1::TASK_KIND_ROUND);
  absl::Notification rounds_seen, state_seen;
  std::thread rounds_watch([&] {
    coordinator_->AwaitJobChange("j", v1::JOB_STATE_RUNNING, 0, absl::Seconds(20));
    rounds_seen.Notify();
  });
  std::thread state_watch([&] {
    coordinator_->AwaitJobChange("j", v1::JOB_STATE_RUNNING, -1, absl::Seconds(20));
    state_seen.Notify();
  });
  for (int t = 0; t < 2; ++t) {
    WaitTask("a", v1::TASK_KIND_ROUND);
    ASSERT_THAT(coordinator_->SubmitUpdate("a", "j", t, mf::Matrix::Constant(3, 2, 0.2)), IsOk());
    WaitTask("b", v1::TASK_KIND_ROUND);
    ASSERT_THAT(coordinator_->SubmitUpdate("b", "j", t, mf::Matrix::Constant(3, 2, 0.6)), IsOk());
    if (t == 0) {
      EXPECT_TRUE(rounds_seen.WaitForNotificationWithTimeout(absl::Seconds(10)))
          << "round 0 closed; the rounds watcher should have been answered";
      EXPECT_FALSE(state_seen.HasBeenNotified()) << "a round closing is no change of state";
    }
  }
  WaitTask("a", v1::TASK_KIND_FINISH);
  for (const std::string p : {"a", "b"}) {
    v1::PrivacyReport r;
    r.set_party(p);
    r.set_job_id("j");
    r.set_finished(true);
    ASSERT_THAT(coordinator_->ReportPrivacy(p, r), IsOk());
  }
  EXPECT_TRUE(state_seen.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "the job finished; the state watcher should have been answered";
  rounds_watch.join();
  state_watch.join();
  auto st = coordinator_->GetJob("j");
  ASSERT_THAT(st, IsOk());
  EXPECT_EQ(st->state(), v1::JOB_STATE_FINISHED);
  const absl::Time asked = absl::Now();
  coordinator_->AwaitJobChange("j", v1::JOB_STATE_FINISHED, -1, absl::Seconds(20));
  coordinator_->AwaitJobChange("nope", v1::JOB_STATE_RUNNING, -1, absl::Seconds(20));
  EXPECT_LT(absl::Now() - asked, absl::Seconds(5)) << "jobs not running are answered at once";
}

TEST_F(JobCoordinatorTest, RosterAndRoundChecks) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(3)), IsOk());
  EXPECT_EQ(coordinator_->SubmitJob(Spec(3)).status().code(), absl::StatusCode::kAlreadyExists);
  v1::JobSpec bad = Spec(3);
  bad.set_job_id("k");
  bad.add_roster("a");
  EXPECT_EQ(coordinator_->SubmitJob(bad).status().code(), absl::StatusCode::kInvalidArgument);
  // A seed in the job would let the server regenerate the parties' noise.
  v1::JobSpec seeded = Spec(3);
  seeded.set_job_id("s");
  seeded.set_has_seed(true);
  seeded.set_seed(42);
  auto refused = coordinator_->SubmitJob(seeded);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("field 'seed'"), std::string::npos) << refused.status();
  WaitTask("a", v1::TASK_KIND_OFFER);
  EXPECT_EQ(coordinator_->GetTask("mallory").kind(), v1::TASK_KIND_IDLE);
  v1::OfferReply r;
  r.set_job_id("j");
  r.set_accept(true);
  EXPECT_EQ(coordinator_->ReplyOffer("mallory", r).code(), absl::StatusCode::kPermissionDenied);
  Accept("a", 4);
  Accept("b", 6);
  WaitTask("a", v1::TASK_KIND_ROUND);
  EXPECT_EQ(coordinator_->SharedFor("mallory", "j", 0).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(coordinator_->SharedFor("a", "j", 1).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(coordinator_->SharedFor("a", "other", 0).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(coordinator_->UploadShape("a", "j", 1).status().code(),
            absl::StatusCode::kFailedPrecondition);
  mf::Matrix nan = mf::Matrix::Constant(3, 2, 0.1);
  nan(0, 0) = NAN;
  EXPECT_EQ(coordinator_->SubmitUpdate("a", "j", 0, nan).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(coordinator_->counters().updates_rejected, 1);
}

TEST_F(JobCoordinatorTest, ResumesFromTheDatabaseAfterARestart) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(4)), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 5);
  Accept("b", 5);
  for (int t = 0; t < 2; ++t) {
    WaitTask("a", v1::TASK_KIND_ROUND);
    ASSERT_TRUE(
        coordinator_->SubmitUpdate("a", "j", t, mf::Matrix::Constant(3, 2, 0.1 * (t + 1))).ok());
    ASSERT_THAT(coordinator_->SubmitUpdate("b", "j", t, mf::Matrix::Constant(3, 2, 0.3)), IsOk());
  }
  v1::Task t2 = WaitTask("a", v1::TASK_KIND_ROUND);
  ASSERT_EQ(t2.round(), 2);
  auto before = coordinator_->SharedFor("a", "j", 2);
  ASSERT_THAT(before, IsOk());
  // Only a's half of round 2 arrives before the "crash": it is lost.
  ASSERT_THAT(coordinator_->SubmitUpdate("a", "j", 2, mf::Matrix::Constant(3, 2, 0.9)), IsOk());
  coordinator_.reset();
  Open();
  v1::Task again = WaitTask("a", v1::TASK_KIND_ROUND);
  EXPECT_EQ(again.round(), 2);
  auto after = coordinator_->SharedFor("a", "j", 2);
  ASSERT_THAT(after, IsOk());
  EXPECT_EQ(**after, **before);
  auto st = coordinator_->GetJob("j");
  ASSERT_THAT(st, IsOk());
  EXPECT_EQ(st->rounds_size(), 2);
  EXPECT_EQ(st->state(), v1::JOB_STATE_RUNNING);
  // The restarted server has seen nobody yet; a's resend must not close the
  // resumed round alone while b (within one liveness window) may still come.
  ASSERT_THAT(coordinator_->SubmitUpdate("a", "j", 2, mf::Matrix::Constant(3, 2, 0.9)), IsOk());
  EXPECT_EQ(coordinator_->GetTask("a").kind(), v1::TASK_KIND_IDLE);  // one bounded long-poll
  EXPECT_EQ(coordinator_->GetJob("j")->rounds_size(), 2);
  ASSERT_THAT(coordinator_->SubmitUpdate("b", "j", 2, mf::Matrix::Constant(3, 2, 0.3)), IsOk());
  v1::Task next = WaitTask("a", v1::TASK_KIND_ROUND);
  EXPECT_EQ(next.round(), 3);
  auto closed = coordinator_->GetJob("j");
  ASSERT_THAT(closed, IsOk());
  ASSERT_EQ(closed->rounds_size(), 3);
  EXPECT_EQ(closed->rounds(2).contributors_size(), 2);
}

TEST_F(JobCoordinatorTest, PerRoundHistoryKeepsEachPartysReportsAcrossARestart) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(3)), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 5);
  Accept("b", 5);
  auto report = [&](const std::string& p, int round, double job_eps, double ledger_eps,
                    std::optional<double> mse) {
    v1::PrivacyReport r;
    r.set_party(p);
    r.set_job_id("j");
    r.set_round(round);
    r.set_epsilon_spent(ledger_eps);
    r.set_job_epsilon(job_eps);
    if (mse) {
      r.set_test_mse(*mse);
      r.set_test_count(10);
    }
    return coordinator_->ReportPrivacy(p, r);
  };
  WaitTask("a", v1::TASK_KIND_ROUND);
  ASSERT_THAT(coordinator_->SubmitUpdate("a", "j", 0, mf::Matrix::Constant(3, 2, 0.1)), IsOk());
  // a reports right after its upload, before the round closes.
  ASSERT_THAT(report("a", 0, 0.3, 1.3, 0.8), IsOk());
  // Reports ahead of the job, or with a NaN spend, are refused and not kept.
  EXPECT_EQ(report("a", 2, 0.3, 1.3, 0.8).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(report("a", 0, NAN, 1.3, 0.8).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(report("a", 0, 0.3, 1.3, -1.0).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_THAT(coordinator_->SubmitUpdate("b", "j", 0, mf::Matrix::Constant(3, 2, 0.3)), IsOk());
  ASSERT_THAT(report("b", 0, 0.4, 0.4, std::nullopt), IsOk());
  WaitTask("a", v1::TASK_KIND_ROUND);
  ASSERT_THAT(coordinator_->SubmitUpdate("a", "j", 1, mf::Matrix::Constant(3, 2, 0.1)), IsOk());
  ASSERT_THAT(coordinator_->SubmitUpdate("b", "j", 1, mf::Matrix::Constant(3, 2, 0.3)), IsOk());
  ASSERT_THAT(report("a", 1, 0.5, 1.5, 0.7), IsOk());
  WaitTask("a", v1::TASK_KIND_ROUND);

  auto check = [](const v1::JobStatus& st) {
    ASSERT_EQ(st.rounds_size(), 2);
    ASSERT_EQ(st.rounds(0).reports_size(), 2);
    const v1::PartyRoundReport& a0 = st.rounds(0).reports(0);
    EXPECT_EQ(a0.party(), "a");
    EXPECT_EQ(a0.job_epsilon(), 0.3);
    EXPECT_EQ(a0.ledger_epsilon(), 1.3);
    ASSERT_TRUE(a0.has_test_mse());
    EXPECT_EQ(a0.test_mse(), 0.8);
    EXPECT_EQ(a0.test_count(), 10);
    EXPECT_EQ(st.rounds(0).reports(1).party(), "b");
    EXPECT_FALSE(st.rounds(0).reports(1).has_test_mse());  // b did not opt in
    ASSERT_EQ(st.rounds(1).reports_size(), 1);
    EXPECT_EQ(st.rounds(1).reports(0).test_mse(), 0.7);
    // Per party: this job's spend next to the whole ledger's.
    EXPECT_EQ(st.parties(0).job_epsilon(), 0.5);
    EXPECT_EQ(st.parties(0).epsilon_spent(), 1.5);
    EXPECT_EQ(st.parties(1).job_epsilon(), 0.4);
  };
  auto live = coordinator_->GetJob("j");
  ASSERT_THAT(live, IsOk());
  check(*live);
  coordinator_.reset();
  Open();
  auto reloaded = coordinator_->GetJob("j");
  ASSERT_THAT(reloaded, IsOk());
  check(*reloaded);
}

TEST_F(JobCoordinatorTest, TooFewAcceptorsFailTheJobWithTheRefusal) {
  v1::JobSpec s = Spec(2);
  s.set_min_parties(2);
  ASSERT_THAT(coordinator_->SubmitJob(s), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 5);
  v1::OfferReply no;
  no.set_party("b");
  no.set_job_id("j");
  no.set_accept(false);
  no.set_refusal("epsilon 1 exceeds the policy cap 0.5");
  ASSERT_THAT(coordinator_->ReplyOffer("b", no), IsOk());
  v1::Task abort = WaitTask("a", v1::TASK_KIND_ABORT);
  EXPECT_EQ(abort.job_id(), "j");
  auto st = coordinator_->GetJob("j");
  ASSERT_THAT(st, IsOk());
  EXPECT_EQ(st->state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(st->error().find("policy cap"), std::string::npos) << st->error();
}

// A party busy with a task is silent on GetTask; its heartbeats keep it
// "connected" (waited for), and silence past the liveness window does not.
TEST_F(JobCoordinatorTest, HeartbeatKeepsABusyPartyLiveAndNeedsRegistration) {
  coordinator_.reset();
  liveness_ = absl::Milliseconds(300);
  clock_ = &fake_clock_;
  Open();
  auto connected = [&](const std::string& party) {
    const v1::ListPartiesResponse list = coordinator_->ListParties();
    for (const v1::PartyStatus& p : list.parties()) {
      if (p.name() == party) return p.connected();
    }
    return false;
  };
  const absl::Status unknown = coordinator_->Heartbeat("a");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kFailedPrecondition) << unknown;
  EXPECT_NE(unknown.message().find("call Register first"), std::string::npos) << unknown;

  ASSERT_THAT(coordinator_->Register("a", "state-a"), IsOk());
  EXPECT_TRUE(connected("a"));
  // Silent: live to the end of the liveness window, not a moment after.
  fake_clock_.Advance(absl::Milliseconds(300));
  EXPECT_TRUE(connected("a")) << "dropped at the end of its 300 ms liveness window";
  fake_clock_.Advance(absl::Milliseconds(1));
  ASSERT_FALSE(connected("a")) << "still connected after its 300 ms liveness window";
  ASSERT_THAT(coordinator_->Heartbeat("a"), IsOk());
  EXPECT_TRUE(connected("a"));
  EXPECT_EQ(coordinator_->liveness(), absl::Milliseconds(300));
}

// Issue 13 item 6: a party declaring 2^31-1 items is refused before its
// reply is stored, naming the field; the job then runs with honest replies.
TEST_F(JobCoordinatorTest, OfferReplyOverTheSizeLimitsIsRefusedAndNotStored) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(1)), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  v1::OfferReply r;
  r.set_party("a");
  r.set_job_id("j");
  r.set_accept(true);
  r.set_users(5);
  r.set_items(2147483647);
  r.set_global_users(10);
  r.set_global_items(2147483647);
  const absl::Status s = coordinator_->ReplyOffer("a", r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("OfferReply.items = 2147483647 exceeds the server's max_items = "
                             "1000000"),
            std::string::npos)
      << s;
  auto stored = store_->LoadJob("j");
  ASSERT_THAT(stored, IsOk());
  EXPECT_FALSE(stored->parties[0].replied);
  EXPECT_EQ(stored->parties[0].items, 0);
  // The party is still asked (its offer is unanswered) and can answer honestly.
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 5);
  Accept("b", 5);
  WaitTask("a", v1::TASK_KIND_ROUND);
}

// A job spec over the limits is refused at submission, naming the field.
TEST_F(JobCoordinatorTest, JobSpecOverTheSizeLimitsIsRefused) {
  v1::JobSpec big = Spec(1);
  big.set_dim(100000);
  const auto s = coordinator_->SubmitJob(big);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("JobSpec.dim = 100000 exceeds the server's max_dim = 1024"),
            std::string::npos)
      << s.status();
  EXPECT_THAT(store_->LoadJob("j"), StatusIs(absl::StatusCode::kNotFound));
}

// Stored state a previous run (or version) left that violates the limits or
// cannot be restored fails that job with the reason; the coordinator starts
// and serves the next job. Before: std::bad_alloc on every restart.
TEST_F(JobCoordinatorTest, BadStoredStateFailsThatJobNotTheServer) {
  coordinator_.reset();
  store_.reset();
  {
    auto raw = ServerStore::Open(dir_ + "/s.db");
    ASSERT_THAT(raw, IsOk());
    // Job "j": both parties "replied" with 2^31-1 items (as an older server stored them).
    ASSERT_THAT((*raw)->CreateJob(Spec(1)), IsOk());
    for (const std::string name : {"a", "b"}) {
      StoredParty p;
      p.name = name;
      p.replied = true;
      p.accepted = true;
      p.weight = 5;
      p.users = 5;
      p.global_users = 10;
      p.items = 2147483647;
      p.global_items = 2147483647;
      ASSERT_THAT((*raw)->SaveParty("j", p), IsOk());
    }
    // Job "r": RUNNING, but its shared matrix is missing.
    v1::JobSpec r = Spec(1);
    r.set_job_id("r");
    ASSERT_THAT((*raw)->CreateJob(r), IsOk());
    ASSERT_THAT((*raw)->SetJobState("r", v1::JOB_STATE_RUNNING), IsOk());
    // Job "k": a healthy job queued behind them.
    v1::JobSpec k = Spec(1);
    k.set_job_id("k");
    ASSERT_THAT((*raw)->CreateJob(k), IsOk());
  }
  Open();  // asserts that Start() succeeds
  auto j = coordinator_->GetJob("j");
  ASSERT_THAT(j, IsOk());
  EXPECT_EQ(j->state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(j->error().find("cannot resume from the stored state: stored OfferReply of party "
                            "'a'.items = 2147483647 exceeds the server's max_items = 1000000"),
            std::string::npos)
      << j->error();
  // "r" fails when the coordinator reaches it, "k" is then offered.
  v1::Task t = WaitTask("a", v1::TASK_KIND_OFFER);
  EXPECT_EQ(t.job_id(), "k");
  auto r = coordinator_->GetJob("r");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(r->error().find("no stored shared matrix"), std::string::npos) << r->error();
  EXPECT_EQ(coordinator_->counters().jobs_failed, 2);
  Accept("a", 5, "k");
  Accept("b", 5, "k");
  EXPECT_EQ(WaitTask("a", v1::TASK_KIND_ROUND).job_id(), "k");
}

}  // namespace
}  // namespace fedmf::server

namespace fedmf::server {
namespace {

// Issue #15, safe joining: a roster naming parties the server would never
// admit is refused at submit, naming them.
TEST_F(JobCoordinatorTest, RosterNamesOutsideTheAllowlistAreRefusedAtSubmit) {
  coordinator_.reset();
  allowed_ = {"a", "b"};
  Open();
  v1::JobSpec s = Spec(1);
  s.add_roster("nobody");
  s.add_roster("ghost");
  const auto refused = coordinator_->SubmitJob(s);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  const std::string m(refused.status().message());
  EXPECT_NE(m.find("'nobody', 'ghost' are not in this server's allowed_parties (a, b)"),
            std::string::npos)
      << m;
  EXPECT_EQ(coordinator_->GetJob("j").status().code(), absl::StatusCode::kNotFound);
  ASSERT_THAT(coordinator_->SubmitJob(Spec(1)), IsOk());
}

// min_parties unset = the whole roster: one refusal fails the job instead of
// running it with fewer parties than the submitter listed.
TEST_F(JobCoordinatorTest, MinPartiesDefaultsToTheRosterSize) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(1)), IsOk());
  auto st = coordinator_->GetJob("j");
  ASSERT_THAT(st, IsOk());
  EXPECT_EQ(st->spec().min_parties(), 2);
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 5);
  v1::OfferReply no;
  no.set_party("b");
  no.set_job_id("j");
  no.set_accept(false);
  no.set_refusal("not today");
  ASSERT_THAT(coordinator_->ReplyOffer("b", no), IsOk());
  WaitTask("a", v1::TASK_KIND_ABORT);
  auto failed = coordinator_->GetJob("j");
  ASSERT_THAT(failed, IsOk());
  EXPECT_EQ(failed->state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(failed->error().find("1 of 2 parties accepted, 2"), std::string::npos)
      << failed->error();
}

// Two processes under one certificate name with different state directories
// would spend one party's budget twice: the second live registration is
// refused; a restart (same state id) takes over; once the first is silent
// past the liveness window the other may register.
TEST_F(JobCoordinatorTest, SecondLiveRegistrationOfANameIsRefused) {
  coordinator_.reset();
  liveness_ = absl::Milliseconds(300);
  clock_ = &fake_clock_;
  Open();
  ASSERT_THAT(coordinator_->Register("a", "dir-1"), IsOk());
  const absl::Status second = coordinator_->Register("a", "dir-2");
  EXPECT_EQ(second.code(), absl::StatusCode::kAlreadyExists) << second;
  EXPECT_NE(second.message().find("already connected from another state directory"),
            std::string::npos)
      << second;
  EXPECT_TRUE(coordinator_->Register("a", "dir-1").ok());  // the same party, restarted
  EXPECT_TRUE(coordinator_->Register("b", "dir-2").ok());  // another name: unrelated
  // Silent up to the end of the window: still refused; past it, the other
  // directory may take the name.
  fake_clock_.Advance(absl::Milliseconds(300));
  EXPECT_EQ(coordinator_->Register("a", "dir-2").code(), absl::StatusCode::kAlreadyExists);
  fake_clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(coordinator_->Register("a", "dir-2"), IsOk());
  EXPECT_EQ(coordinator_->Register("a", "dir-1").code(), absl::StatusCode::kAlreadyExists);
}

// Status words: a party that has not answered is pending (not refused), a
// second job waits behind the active one.
TEST_F(JobCoordinatorTest, StatusTellsPendingPartiesAndQueuedJobs) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(1)), IsOk());
  v1::JobSpec second = Spec(1);
  second.set_job_id("k");
  ASSERT_THAT(coordinator_->SubmitJob(second), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 5);
  auto st = coordinator_->GetJob("j");
  ASSERT_THAT(st, IsOk());
  EXPECT_EQ(st->state(), v1::JOB_STATE_WAITING);
  EXPECT_EQ(st->queued_behind(), "");
  ASSERT_EQ(st->parties_size(), 2);
  EXPECT_TRUE(st->parties(0).replied());
  EXPECT_TRUE(st->parties(0).accepted());
  EXPECT_FALSE(st->parties(1).replied());
  auto queued = coordinator_->GetJob("k");
  ASSERT_THAT(queued, IsOk());
  EXPECT_EQ(queued->state(), v1::JOB_STATE_WAITING);
  EXPECT_EQ(queued->queued_behind(), "j");
}

}  // namespace
}  // namespace fedmf::server

namespace fedmf::server {
namespace {

// Issue #17: an operator cancels a running job (its parties are told to
// abort, the next job starts) and a queued one (never offered); an ended job
// has nothing to cancel.
TEST_F(JobCoordinatorTest, CancelEndsRunningAndQueuedJobsOnly) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(5)), IsOk());
  v1::JobSpec second = Spec(1);
  second.set_job_id("k");
  ASSERT_THAT(coordinator_->SubmitJob(second), IsOk());
  v1::JobSpec third = Spec(1);
  third.set_job_id("m");
  ASSERT_THAT(coordinator_->SubmitJob(third), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  Accept("a", 5);
  Accept("b", 5);
  WaitTask("a", v1::TASK_KIND_ROUND);
  auto ids = coordinator_->JobIds();
  ASSERT_THAT(ids, IsOk());
  EXPECT_EQ(*ids, (std::vector<std::string>{"j", "k", "m"}));

  auto queued = coordinator_->CancelJob("m", "alice");
  ASSERT_THAT(queued, IsOk());
  EXPECT_EQ(*queued, v1::JOB_STATE_WAITING);
  auto running = coordinator_->CancelJob("j", "alice");
  ASSERT_THAT(running, IsOk());
  EXPECT_EQ(*running, v1::JOB_STATE_RUNNING);
  v1::Task abort = WaitTask("a", v1::TASK_KIND_ABORT);
  EXPECT_EQ(abort.job_id(), "j");
  auto j = coordinator_->GetJob("j");
  ASSERT_THAT(j, IsOk());
  EXPECT_EQ(j->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(j->error(), "cancelled by operator alice");
  auto m = coordinator_->GetJob("m");
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(m->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(m->error(), "cancelled by operator alice before it started");
  // The queue moves on to k (m is never offered).
  v1::Task next = WaitTask("b", v1::TASK_KIND_OFFER);
  EXPECT_EQ(next.job_id(), "k");
  EXPECT_EQ(coordinator_->CancelJob("j", "alice").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(coordinator_->CancelJob("nope", "alice").status().code(), absl::StatusCode::kNotFound);
}

// Issue 55: any operator could cancel any operator's job.
TEST_F(JobCoordinatorTest, OnlyTheSubmitterOrAnAdminCancels) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(5), "alice"), IsOk());
  v1::JobSpec queued = Spec(1);
  queued.set_job_id("k");
  ASSERT_THAT(coordinator_->SubmitJob(queued, "alice"), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);  // j is active, k waits behind it
  for (const char* job : {"j", "k"}) {
    const absl::Status refused = coordinator_->CancelJob(job, "mallory", /*admin=*/false).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << refused;
    EXPECT_NE(refused.message().find("admin_operators"), std::string::npos) << refused;
  }
  EXPECT_THAT(coordinator_->CancelJob("k", "alice", /*admin=*/false), IsOk());
  EXPECT_THAT(coordinator_->CancelJob("j", "root", /*admin=*/true), IsOk());
  auto j = coordinator_->GetJob("j");
  ASSERT_THAT(j, IsOk());
  EXPECT_EQ(j->error(), "cancelled by operator root");
  // The submitter is kept across a restart (a column of the jobs table).
  v1::JobSpec later = Spec(1);
  later.set_job_id("m");
  ASSERT_THAT(coordinator_->SubmitJob(later, "alice"), IsOk());
  coordinator_.reset();
  store_.reset();
  Open();
  EXPECT_EQ(coordinator_->CancelJob("m", "mallory", false).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(coordinator_->CancelJob("m", "alice", false), IsOk());
}

// Issue 55: an 8 MB refusal is stored cut and escaped, and job views bound
// what an older database holds.
TEST_F(JobCoordinatorTest, ARefusalIsStoredBoundedAndEscaped) {
  ASSERT_THAT(coordinator_->SubmitJob(Spec(1)), IsOk());
  WaitTask("a", v1::TASK_KIND_OFFER);
  v1::OfferReply no;
  no.set_job_id("j");
  no.set_accept(false);
  no.set_refusal("\x1b[2K" + std::string(8'000'000, 'r'));
  ASSERT_THAT(coordinator_->ReplyOffer("a", no), IsOk());
  auto st = coordinator_->GetJob("j");
  ASSERT_THAT(st, IsOk());
  const std::string& refusal = st->parties(0).refusal();
  EXPECT_LT(refusal.size(), 600u);
  EXPECT_EQ(refusal.rfind("\\x1b[2Krrr", 0), 0u) << refusal.substr(0, 40);
  EXPECT_NE(refusal.find("more bytes]"), std::string::npos);
  EXPECT_LT(st->ByteSizeLong(), size_t{64} << 10);
}

}  // namespace
}  // namespace fedmf::server
