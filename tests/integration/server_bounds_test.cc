// Issue 13, items 6 and 7, on real daemons over loopback mTLS.
//  Item 6: a roster party (the test itself, with party-0's certificate)
//    declaring 2^31-1 items gets INVALID_ARGUMENT naming the field; nothing
//    is stored, so the server restarted on the same database comes up
//    SERVING, offers the job again, and runs the next job to completion.
//  Item 7: a party's admin endpoint admits only the operator certificates
//    its config lists (admin_operators); any other certificate gets one and
//    the same PERMISSION_DENIED whatever it asks (no membership oracle),
//    while the listed operator is served.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/net/credentials.h"
#include "common/net/health_client.h"
#include "common/pki/ca.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

const std::vector<std::string> kSans{"localhost", "127.0.0.1"};

std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 10) {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return c;
}

// party-0 by hand: registers, long-polls for a task of `job_id`.
absl::StatusOr<v1::Task> OfferFor(v1::Coordinator::Stub* stub, const std::string& job_id) {
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (absl::Now() < give_up) {
    v1::RegisterRequest reg;
    reg.set_party("party-0");
    v1::RegisterResponse registered;
    auto ctx = Ctx();
    ctx->set_wait_for_ready(true);  // across a server restart: wait for the channel
    if (!stub->Register(ctx.get(), reg, &registered).ok()) continue;
    v1::GetTaskRequest req;
    req.set_party("party-0");
    v1::Task task;
    grpc::Status s = stub->GetTask(Ctx(30).get(), req, &task);
    if (!s.ok()) continue;
    if (task.kind() == v1::TASK_KIND_OFFER && task.job_id() == job_id) return task;
  }
  return absl::DeadlineExceededError(absl::StrCat("no offer of job '", job_id, "' in 60 s"));
}

class ServerBoundsTest : public ClusterTest {};

TEST_F(ServerBoundsTest, HugeOfferReplyIsRefusedAndTheServerServesAndRestartsCleanly) {
  auto plan = PlanJob(SyntheticHflFlags(1), "honest", 60, /*min_parties=*/1);
  ASSERT_THAT(plan, IsOk());
  cluster::ClusterOptions options = OptionsFor(*plan);
  ASSERT_NO_FATAL_FAILURE(StartCluster(options, {1, 2}));
  const std::string address = absl::StrCat("127.0.0.1:", cluster_->server_port());
  auto ch0 =
      net::MakeChannel(address, net::TlsConfig{false, cluster_->cert_dir(), "party-0"}, "server");
  ASSERT_THAT(ch0, IsOk());
  auto p0 = v1::Coordinator::NewStub(*ch0);

  // Job "huge" lists party-0 alone; the honest job waits behind it.
  v1::JobSpec huge = plan->spec;
  huge.set_job_id("huge");
  huge.clear_roster();
  huge.add_roster("party-0");
  ASSERT_THAT(cluster_->SubmitJob(huge), IsOk());
  v1::JobSpec honest = plan->spec;
  honest.clear_roster();
  honest.add_roster("party-1");
  honest.add_roster("party-2");
  ASSERT_THAT(cluster_->SubmitJob(honest), IsOk());

  ASSERT_THAT(OfferFor(p0.get(), "huge"), IsOk());
  v1::OfferReply lie;
  lie.set_party("party-0");
  lie.set_job_id("huge");
  lie.set_accept(true);
  lie.set_users(10);
  lie.set_items(std::numeric_limits<int32_t>::max());
  lie.set_global_users(10);
  lie.set_global_items(std::numeric_limits<int32_t>::max());
  v1::Ack ack;
  grpc::Status refused = p0->ReplyOffer(Ctx().get(), lie, &ack);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find(
                "OfferReply.items = 2147483647 exceeds the server's max_items = 1000000"),
            std::string::npos)
      << refused.error_message();
  EXPECT_TRUE(cluster_->ServerRunning());
  auto waiting = cluster_->GetJob("huge");
  ASSERT_THAT(waiting, IsOk());
  EXPECT_EQ(waiting->state(), v1::JOB_STATE_WAITING);

  // Restart on the same database: it comes up cleanly (before: the stored
  // reply made every start allocate 2^31-1 x dim and die of bad_alloc).
  ASSERT_THAT(cluster_->RestartServer(), IsOk());
  auto fresh =
      net::MakeChannel(address, net::TlsConfig{false, cluster_->cert_dir(), "party-0"}, "server");
  ASSERT_THAT(fresh, IsOk());
  auto health = net::CheckHealth(*fresh, address, "", absl::Seconds(10));
  ASSERT_THAT(health, IsOk());
  EXPECT_EQ(*health, "SERVING");
  // Nothing was stored: party-0 is offered the job again, and refuses it.
  ASSERT_THAT(OfferFor(p0.get(), "huge"), IsOk());
  v1::OfferReply no;
  no.set_party("party-0");
  no.set_job_id("huge");
  no.set_accept(false);
  no.set_refusal("test: refused honestly");
  ASSERT_THAT(p0->ReplyOffer(Ctx().get(), no, &ack), IsOk());

  // The restarted server runs the honest job to completion.
  auto done = cluster_->WaitJob("honest", absl::Minutes(3));
  ASSERT_THAT(done, IsOk());
  EXPECT_EQ(done->state(), v1::JOB_STATE_FINISHED) << done->error();
  EXPECT_EQ(done->rounds_size(), 1);
  auto failed = cluster_->GetJob("huge");
  ASSERT_THAT(failed, IsOk());
  EXPECT_EQ(failed->state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(failed->error().find("refused honestly"), std::string::npos) << failed->error();
  EXPECT_TRUE(cluster_->ServerRunning());
}

// Item 6, concurrency: with max_concurrent_polls = 2 and 4 s long-polls, two
// parties' open GetTask calls fill the cap; a third long-poll is refused with
// RESOURCE_EXHAUSTED at once (not after the poll length), naming the key, and
// the server answers again once the polls end.
TEST_F(ServerBoundsTest, LongPollsBeyondTheCapAreRefusedPromptly) {
  auto plan = PlanJob(SyntheticHflFlags(1), "polls", 60, /*min_parties=*/1);
  ASSERT_THAT(plan, IsOk());
  cluster::ClusterOptions options = OptionsFor(*plan);
  options.poll_seconds = 4;
  options.liveness_seconds = 30;
  options.server_extra_yaml = "max_concurrent_polls: 2\n";
  ASSERT_NO_FATAL_FAILURE(StartCluster(options, {}));
  const std::string address = absl::StrCat("127.0.0.1:", cluster_->server_port());
  std::vector<std::unique_ptr<v1::Coordinator::Stub>> stubs;
  for (int k = 0; k < 3; ++k) {
    const std::string name = cluster::LocalCluster::PartyName(k);
    auto ch =
        net::MakeChannel(address, net::TlsConfig{false, cluster_->cert_dir(), name}, "server");
    ASSERT_THAT(ch, IsOk());
    stubs.push_back(v1::Coordinator::NewStub(*ch));
    v1::RegisterRequest reg;
    reg.set_party(name);
    v1::RegisterResponse resp;
    ASSERT_THAT(stubs.back()->Register(Ctx().get(), reg, &resp), IsOk());
  }
  auto poll = [&](int k, int deadline_seconds) {
    v1::GetTaskRequest req;
    req.set_party(cluster::LocalCluster::PartyName(k));
    v1::Task task;
    return stubs[k]->GetTask(Ctx(deadline_seconds).get(), req, &task);
  };
  grpc::Status held[2];
  std::thread a([&] { held[0] = poll(0, 30); });
  std::thread b([&] { held[1] = poll(1, 30); });
  // Until both holders are in, a probe may itself take a slot (it then holds
  // it for the poll length, server-side, after its 1 s client deadline):
  // either way the cap is reached within three probes.
  grpc::Status refused;
  double refused_seconds = -1;
  for (int attempt = 0; attempt < 3 && refused_seconds < 0; ++attempt) {
    const absl::Time start = absl::Now();
    grpc::Status s = poll(2, 1);
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      refused = s;
      refused_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    }
  }
  a.join();
  b.join();
  ASSERT_GE(refused_seconds, 0) << "no long-poll was refused with 2 of 2 slots held";
  EXPECT_LT(refused_seconds, 1.0) << "refused only after " << refused_seconds << " s";
  EXPECT_NE(refused.error_message().find("max_concurrent_polls = 2"), std::string::npos)
      << refused.error_message();
  std::cout << "long-poll over the cap refused in " << refused_seconds * 1000 << " ms\n";
  // The holders were answered normally (IDLE after the poll length).
  EXPECT_TRUE(held[0].ok() || held[1].ok()) << held[0].error_message();
  // Slots are released: once the polls have ended, a new one is served
  // (bounded poll of the observable state: an accepted probe may hold its
  // slot for up to 4 s after the holders returned).
  grpc::Status last;
  const absl::Time give_up = absl::Now() + absl::Seconds(15);
  while (absl::Now() < give_up) {
    last = poll(2, 10);
    if (last.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_THAT(last, IsOk()) << last.error_message();
  EXPECT_TRUE(cluster_->ServerRunning());
}

TEST_F(ServerBoundsTest, AdminEndpointAdmitsOnlyListedOperatorsAndIsNoMembershipOracle) {
  auto plan = PlanJob(SyntheticHflFlags(1), "admin", 60, /*min_parties=*/1);
  ASSERT_THAT(plan, IsOk());
  ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*plan), {0, 1, 2}));
  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(3));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();

  const data::PartyData& mine = plan->federation.parties[0];
  const std::string member = plan->dataset.user_ids[mine.global_users[0]];
  const std::string foreign = plan->dataset.user_ids[plan->federation.parties[1].global_users[0]];

  // The listed operator ("operator", as `fedmf demo` writes the configs):
  // its own party's data, membership included.
  auto ledger = cluster_->PartyLedger(0);
  ASSERT_THAT(ledger, IsOk());
  EXPECT_GT(ledger->entries_size(), 0);
  auto recs = cluster_->Recommend(0, member, 5);
  ASSERT_THAT(recs, IsOk());
  EXPECT_EQ(recs->items_size(), 5);
  auto not_ours = cluster_->Recommend(0, foreign, 5);
  EXPECT_EQ(not_ours.status().code(), absl::StatusCode::kNotFound) << not_ours.status();

  // Another operator of the federation (certified by the same CA), and a
  // party certificate: refused, identically, whatever they ask.
  const std::string& cert_dir = cluster_->cert_dir();
  ASSERT_TRUE(pki::IssueCertificate(cert_dir, cert_dir, "other-operator", pki::Role::kOperator,
                                    kSans, absl::Hours(12))
                  .ok());
  const std::string admin = absl::StrCat("127.0.0.1:", cluster_->admin_port(0));
  for (const std::string who : {"other-operator", "party-1"}) {
    SCOPED_TRACE(who);
    auto ch = net::MakeChannel(admin, net::TlsConfig{false, cert_dir, who},
                               net::ExpectedPeer{"party-0", pki::Role::kParty});
    ASSERT_THAT(ch, IsOk());
    auto stub = v1::PartyAdmin::NewStub(*ch);
    std::vector<grpc::Status> answers;
    for (const std::string& user : {member, foreign, std::string("no-such-user")}) {
      for (const std::string& job : {std::string(), *id, std::string("no-such-job")}) {
        v1::RecommendRequest req;
        req.set_user(user);
        req.set_job_id(job);
        req.set_top(5);
        v1::RecommendResponse resp;
        answers.push_back(stub->Recommend(Ctx().get(), req, &resp));
        EXPECT_EQ(resp.items_size(), 0);
      }
    }
    v1::RecommendRequest bad_top;  // even an invalid request: refused first
    bad_top.set_user(member);
    bad_top.set_top(0);
    v1::RecommendResponse ignored;
    answers.push_back(stub->Recommend(Ctx().get(), bad_top, &ignored));
    v1::LedgerResponse their_ledger;
    answers.push_back(stub->Ledger(Ctx().get(), v1::LedgerRequest(), &their_ledger));
    EXPECT_EQ(their_ledger.entries_size(), 0);
    const std::string expected = absl::StrCat(
        "certificate '", who,
        "' is refused: this party's admin endpoint admits only the operator certificates its "
        "config lists in 'admin_operators'");
    for (const grpc::Status& s : answers) {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
      EXPECT_EQ(s.error_message(), expected);
    }
  }
}

}  // namespace
}  // namespace fedmf::it
