// The server's FMF job lifecycle as a pure state machine: no store, no
// threads, no sleeps; time is a value the test moves.
#include "server/fmf/fmf_job.h"

#include <set>
#include <string>

#include "common/base/status_macros.h"
#include "common/fmf/wire/job_codec.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::server {
namespace {

using Kind = FmfJob::Step::Kind;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

StoredJob Waiting(int rounds, int min_parties = 2) {
  fmf::JobConfig c;
  c.job_id = "j";
  c.setting = fmf::Setting::kHfl;
  c.split = fmf::SplitKind::kHorizontal;
  c.rounds = rounds;
  c.dim = 2;
  StoredJob job;
  job.spec = net::SpecFromJobConfig(c);
  job.spec.add_roster("a");
  job.spec.add_roster("b");
  job.spec.set_min_parties(min_parties);
  job.spec.set_round_deadline_seconds(10);
  for (const char* name : {"a", "b"}) {
    StoredParty p;
    p.name = name;
    job.parties.push_back(p);
  }
  return job;
}

FmfJobOptions Options() {
  FmfJobOptions o;
  o.offer_deadline = absl::Seconds(60);
  o.finish_deadline = absl::Seconds(30);
  o.seed = 7;
  return o;
}

FmfJob Make(StoredJob stored) {
  auto job = FmfJob::Restore(std::move(stored), Options(), kT0, random::Csprng::FromSeed(1));
  EXPECT_THAT(job, IsOk());
  return std::move(*job);
}

v1::OfferReply Accept(int users) {
  v1::OfferReply r;
  r.set_job_id("j");
  r.set_accept(true);
  r.set_users(users);
  r.set_items(3);
  r.set_global_users(10);
  r.set_global_items(3);
  return r;
}

// Everyone awaited / no one awaited.
bool All(const std::string&) { return true; }
bool Nobody(const std::string&) { return false; }

mf::Matrix Filled(const FmfJob& job, double value) {
  mf::Matrix m = *job.stored().shared;
  m.setConstant(value);
  return m;
}

TEST(FmfJobTest, OfferRoundsAndFinishWithTheTransitionsToStore) {
  FmfJob job = Make(Waiting(/*rounds=*/2));
  EXPECT_EQ(job.TaskFor("a").kind(), v1::TASK_KIND_OFFER);
  EXPECT_EQ(job.TaskFor("stranger").kind(), v1::TASK_KIND_IDLE);
  EXPECT_EQ(job.Advance(kT0 + absl::Seconds(1), All).kind, Kind::kNone);  // b has not replied

  auto stored_a = job.ReplyOffer(0, Accept(3));
  ASSERT_THAT(stored_a, IsOk());
  ASSERT_TRUE(stored_a->has_value());
  EXPECT_TRUE((*stored_a)->accepted);
  EXPECT_EQ((*stored_a)->weight, 3);
  EXPECT_EQ(job.ReplyOffer(0, Accept(3)).status().code(), absl::StatusCode::kAlreadyExists);
  ASSERT_THAT(job.ReplyOffer(1, Accept(1)), IsOk());

  const FmfJob::Step started = job.Advance(kT0 + absl::Seconds(2), All);
  ASSERT_EQ(started.kind, Kind::kStarted);
  EXPECT_EQ(job.stored().state, v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(job.stored().shared.has_value());
  EXPECT_EQ(job.stored().shared->rows(), 3);
  EXPECT_TRUE(job.started());
  EXPECT_EQ(job.TaskFor("a").kind(), v1::TASK_KIND_ROUND);

  // Round 0: the weighted average (3:1) of the two uploads.
  ASSERT_THAT(job.SubmitUpdate(0, 0, Filled(job, 0.2)), IsOk());
  EXPECT_EQ(job.TaskFor("a").kind(), v1::TASK_KIND_IDLE);                 // done with this round
  EXPECT_EQ(job.Advance(kT0 + absl::Seconds(3), All).kind, Kind::kNone);  // b is awaited
  EXPECT_THAT(job.SubmitUpdate(1, 1, Filled(job, 0.6)),
              StatusIs(absl::StatusCode::kFailedPrecondition));  // not the open round
  ASSERT_THAT(job.SubmitUpdate(1, 0, Filled(job, 0.6)), IsOk());
  const FmfJob::Step closed = job.Advance(kT0 + absl::Seconds(4), All);
  ASSERT_EQ(closed.kind, Kind::kRoundClosed);
  EXPECT_EQ(closed.record.round(), 0);
  EXPECT_DOUBLE_EQ(closed.record.seconds(), 2.0);  // since the round opened at t0 + 2
  EXPECT_EQ(closed.record.contributors_size(), 2);
  EXPECT_EQ(closed.record.missing_size(), 0);
  EXPECT_EQ(job.stored().round, 1);
  EXPECT_NEAR((*job.stored().shared)(0, 0), 0.75 * 0.2 + 0.25 * 0.6, 1e-6);

  // Round 1 closes at its deadline without b, which is not awaited.
  ASSERT_THAT(job.SubmitUpdate(0, 1, Filled(job, 0.4)), IsOk());
  const FmfJob::Step partial = job.Advance(kT0 + absl::Seconds(5), Nobody);
  ASSERT_EQ(partial.kind, Kind::kFailed);  // min_parties 2: one contributor is too few
  // Issue 56, item 7: the party that did not answer is named.
  EXPECT_NE(partial.error.find("only 1 party answered, 2 needed; no answer from b"),
            std::string::npos)
      << partial.error;
}

// A party cannot make its update the average by declaring a huge size
// (issue #54/#55): its weight is capped at kMaxWeightRatio x the median of
// the others', also for a job restored after a server restart.
TEST(FmfJobTest, ADeclaredWeightIsCappedAgainstTheOthers) {
  FmfJob job = Make(Waiting(/*rounds=*/2));
  v1::OfferReply greedy = Accept(1);
  greedy.set_users(1000000);
  greedy.set_global_users(1000000);
  ASSERT_THAT(job.ReplyOffer(0, greedy), IsOk());
  ASSERT_THAT(job.ReplyOffer(1, Accept(1)), IsOk());
  ASSERT_EQ(job.Advance(kT0, All).kind, Kind::kStarted);
  EXPECT_EQ(job.stored().parties[0].weight, 1000000);  // stored as declared
  ASSERT_THAT(job.SubmitUpdate(0, 0, Filled(job, 0.2)), IsOk());
  ASSERT_THAT(job.SubmitUpdate(1, 0, Filled(job, 0.6)), IsOk());
  ASSERT_EQ(job.Advance(kT0 + absl::Seconds(1), All).kind, Kind::kRoundClosed);
  // 4:1, not 10^6:1.
  const double capped = (4 * 0.2 + 1 * 0.6) / 5;
  EXPECT_NEAR((*job.stored().shared)(0, 0), capped, 1e-6);
  // Restored (a server restart): the same weights again.
  FmfJob restored = Make(job.stored());
  ASSERT_THAT(restored.SubmitUpdate(0, 1, Filled(restored, 0.2)), IsOk());
  ASSERT_THAT(restored.SubmitUpdate(1, 1, Filled(restored, 0.6)), IsOk());
  ASSERT_EQ(restored.Advance(kT0 + absl::Seconds(2), All).kind, Kind::kRoundClosed);
  EXPECT_NEAR((*restored.stored().shared)(0, 0), capped, 1e-6);
}

// An HFL party with a file of its own sends no user count (0); a VFL party
// no item count beyond what it declares (issue #54, item 3).
TEST(FmfJobTest, AnHflPartyMaySendNoUserCount) {
  FmfJob job = Make(Waiting(/*rounds=*/1, /*min_parties=*/1));
  v1::OfferReply r = Accept(3);
  r.set_global_users(0);
  ASSERT_THAT(job.ReplyOffer(0, r), IsOk());
}

TEST(FmfJobTest, StageThreeWaitsForAwaitedPartiesUntilTheFinishDeadline) {
  FmfJob job = Make(Waiting(/*rounds=*/1, /*min_parties=*/1));
  ASSERT_THAT(job.ReplyOffer(0, Accept(2)), IsOk());
  ASSERT_THAT(job.ReplyOffer(1, Accept(2)), IsOk());
  ASSERT_EQ(job.Advance(kT0, All).kind, Kind::kStarted);
  ASSERT_THAT(job.SubmitUpdate(0, 0, Filled(job, 0.3)), IsOk());
  // b never uploads; a live b is waited for until the round deadline (10 s).
  EXPECT_EQ(job.Advance(kT0 + absl::Seconds(9), All).kind, Kind::kNone);
  const FmfJob::Step closed = job.Advance(kT0 + absl::Seconds(10), All);
  ASSERT_EQ(closed.kind, Kind::kRoundClosed);
  ASSERT_EQ(closed.record.missing_size(), 1);
  EXPECT_EQ(closed.record.missing(0), "b");
  EXPECT_EQ(job.TaskFor("a").kind(), v1::TASK_KIND_FINISH);

  v1::PrivacyReport report;
  report.set_job_id("j");
  report.set_round(1);
  report.set_epsilon_spent(0.5);
  report.set_job_epsilon(0.5);
  report.set_finished(true);
  report.set_test_mse(0.9);
  report.set_test_count(4);
  auto history = job.CheckReport(0, report);
  ASSERT_THAT(history, IsOk());
  EXPECT_EQ(history->party(), "a");
  EXPECT_TRUE(job.stored().reports.empty());  // nothing applied before it is stored
  const StoredParty& a =
      job.ApplyReport(0, report.round(), job.PartyAfterReport(0, report), *history);
  EXPECT_TRUE(a.finished);
  EXPECT_DOUBLE_EQ(a.test_mse, 0.9);
  EXPECT_EQ(job.TaskFor("a").kind(), v1::TASK_KIND_IDLE);

  // b is still awaited: Stage 3 waits for it until the finish deadline (30 s).
  EXPECT_EQ(job.Advance(kT0 + absl::Seconds(39), All).kind, Kind::kNone);
  EXPECT_EQ(job.Advance(kT0 + absl::Seconds(40), All).kind, Kind::kFinished);
  EXPECT_EQ(job.stored().state, v1::JOB_STATE_FINISHED);
}

TEST(FmfJobTest, UntrustedRepliesAndReportsAreRefusedWithTheField) {
  FmfJob job = Make(Waiting(/*rounds=*/1));
  EXPECT_EQ(job.RosterIndex("a", "other").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(job.RosterIndex("c", "j").status().code(), absl::StatusCode::kPermissionDenied);
  v1::OfferReply bad = Accept(3);
  bad.set_global_items(4);  // an HFL party must hold every item
  auto r = job.ReplyOffer(0, bad);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("field 'items'"), std::string::npos) << r.status();
  EXPECT_FALSE(job.stored().parties[0].replied);  // nothing changed

  v1::PrivacyReport ahead;
  ahead.set_job_id("j");
  ahead.set_round(5);  // the job is at round 0
  EXPECT_NE(job.CheckReport(0, ahead).status().message().find("field 'round'"), std::string::npos);
  EXPECT_THAT(job.SharedFor(0, 0),
              StatusIs(absl::StatusCode::kPermissionDenied));  // not running yet
  EXPECT_FALSE(job.TakesUpdatesFrom(0));
}

TEST(FmfJobTest, OfferDeadlineStartsWithTheAcceptorsOrFailsNamingTheSilent) {
  FmfJob enough = Make(Waiting(/*rounds=*/1, /*min_parties=*/1));
  ASSERT_THAT(enough.ReplyOffer(0, Accept(2)), IsOk());
  EXPECT_EQ(enough.Advance(kT0 + absl::Seconds(59), All).kind, Kind::kNone);
  EXPECT_EQ(enough.Advance(kT0 + absl::Seconds(60), All).kind, Kind::kStarted);
  EXPECT_EQ(enough.TaskFor("b").kind(), v1::TASK_KIND_IDLE);  // never replied: not in it

  FmfJob few = Make(Waiting(/*rounds=*/1, /*min_parties=*/2));
  ASSERT_THAT(few.ReplyOffer(0, Accept(2)), IsOk());
  const FmfJob::Step failed = few.Advance(kT0 + absl::Seconds(60), All);
  ASSERT_EQ(failed.kind, Kind::kFailed);
  EXPECT_NE(failed.error.find("1 of 2 parties accepted, 2 needed (b: no reply)"), std::string::npos)
      << failed.error;
}

// The same seed gives the same initial matrix (the simulator's derivation),
// and a restored RUNNING job resumes at its stored round.
TEST(FmfJobTest, RestoresARunningJobAtItsStoredRound) {
  FmfJob job = Make(Waiting(/*rounds=*/3));
  ASSERT_THAT(job.ReplyOffer(0, Accept(2)), IsOk());
  ASSERT_THAT(job.ReplyOffer(1, Accept(2)), IsOk());
  ASSERT_EQ(job.Advance(kT0, All).kind, Kind::kStarted);
  ASSERT_THAT(job.SubmitUpdate(0, 0, Filled(job, 0.1)), IsOk());
  ASSERT_THAT(job.SubmitUpdate(1, 0, Filled(job, 0.3)), IsOk());
  ASSERT_EQ(job.Advance(kT0 + absl::Seconds(1), All).kind, Kind::kRoundClosed);

  FmfJob again = Make(job.stored());
  EXPECT_EQ(again.stored().round, 1);
  EXPECT_TRUE(again.started());
  ASSERT_THAT(again.SharedFor(0, 1), IsOk());
  EXPECT_EQ(**again.SharedFor(0, 1), **job.SharedFor(0, 1));
  EXPECT_EQ(again.SharedFor(0, 0).status().code(), absl::StatusCode::kFailedPrecondition);

  StoredJob broken = job.stored();
  broken.shared.reset();
  EXPECT_EQ(FmfJob::Restore(broken, Options(), kT0, random::Csprng::FromSeed(1)).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace fedmf::server

namespace fedmf::server {
namespace {

StoredJob CouplingWaiting(int rounds) {
  StoredJob job = Waiting(rounds);
  fmf::JobConfig c;
  c.job_id = "j";
  c.setting = fmf::Setting::kCoupling;
  c.split = fmf::SplitKind::kHorizontal;
  c.granularity = fmf::Granularity::kRating;
  c.local_iters = 1;
  c.rounds = rounds;
  c.dim = 2;
  v1::JobSpec spec = net::SpecFromJobConfig(c);
  spec.mutable_roster()->CopyFrom(job.spec.roster());
  spec.set_min_parties(2);
  spec.set_round_deadline_seconds(10);
  job.spec = spec;
  return job;
}

// A coupling job's shared matrix is the whole model (10 users, 3 items, rank
// 2: 1 x 135); the owners must agree on its size, its size is bounded by the
// limits, and a restarted server resumes it from the stored model.
TEST(FmfJobTest, CouplingJobRunsOnTheWholeModelAndResumes) {
  FmfJob job = Make(CouplingWaiting(/*rounds=*/3));
  auto a = job.ReplyOffer(0, Accept(1));
  ASSERT_THAT(a, IsOk());
  v1::OfferReply other = Accept(1);
  other.set_global_users(11);  // disagrees with party a
  auto b = job.ReplyOffer(1, other);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(job.Advance(kT0, All).kind, Kind::kFailed);

  FmfJob agreed = Make(CouplingWaiting(/*rounds=*/3));
  ASSERT_THAT(agreed.ReplyOffer(0, Accept(1)), IsOk());
  ASSERT_THAT(agreed.ReplyOffer(1, Accept(1)), IsOk());
  ASSERT_EQ(agreed.Advance(kT0, All).kind, Kind::kStarted);
  const int64_t p = (10 + 3) * 2 + 10 * 10 + 3 * 3;
  ASSERT_EQ(agreed.stored().shared->rows(), 1);
  ASSERT_EQ(agreed.stored().shared->cols(), p);
  auto shape = agreed.UploadShape(0, 0);
  ASSERT_THAT(shape, IsOk());
  EXPECT_EQ(shape->second, p);
  // A noisy sum may be negative (an HFL update may not).
  ASSERT_THAT(agreed.SubmitUpdate(0, 0, Filled(agreed, -0.5)), IsOk());
  ASSERT_THAT(agreed.SubmitUpdate(1, 0, Filled(agreed, -0.5)), IsOk());
  const mf::Matrix before = *agreed.stored().shared;
  ASSERT_EQ(agreed.Advance(kT0 + absl::Seconds(1), All).kind, Kind::kRoundClosed);
  const mf::Matrix after = *agreed.stored().shared;
  // theta - 0.01 * (-1): every value moved up (couplings stay inside [-1, 1]).
  EXPECT_NEAR(after(0, 0) - before(0, 0), 0.01, 1e-6);
  EXPECT_NEAR(after(0, p - 1) - before(0, p - 1), 0.01, 1e-6);

  // Restart: the stored job resumes at round 1 with the stored model.
  FmfJob resumed = Make(agreed.stored());
  EXPECT_EQ(resumed.TaskFor("a").round(), 1);
  auto shared = resumed.SharedFor(0, 1);
  ASSERT_THAT(shared, IsOk());
  EXPECT_EQ(**shared, after);

  // Sizes whose model would exceed the server's limit are refused at the reply.
  FmfJob huge = Make(CouplingWaiting(/*rounds=*/3));
  v1::OfferReply big = Accept(1);
  big.set_global_users(20000);
  big.set_global_items(3);
  EXPECT_THAT(huge.ReplyOffer(0, big), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::server
