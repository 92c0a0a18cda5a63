// party/party_agent.h: fedmf-party's protocol loop against a scripted
// coordinator, in process (a real gRPC server on an in-process channel, a
// real SQLite ledger). The fake serves the tasks the test queues and records
// every reply, upload and report; the test waits on those records (the
// fake's condition variable), never on a timer.
//
// What is checked is the party's side of the trust boundary: offers its
// policy or its declared range forbid are refused with the reason and
// charge nothing; a round is charged once, durably, before its bytes leave;
// a round asked again — by the same process or after a restart — resends
// the persisted bytes instead of releasing a second, unaccounted update.
#include "party/party_agent.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/data/catalogue.h"
#include "common/fmf/wire/job_codec.h"
#include "common/fmf/wire/matrix_codec.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fedmf::party {
namespace {

using ::fedmf::testing::IsOk;
using ::testing::HasSubstr;

constexpr char kData[] = "synthetic:users=40,items=30,density=0.3,seed=3";
constexpr int kDim = 3;
constexpr int32_t kChunk = 50;  // several chunks per matrix

// A coordinator that hands out queued tasks and records what the party sends.
class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  void Push(v1::Task task) {
    absl::MutexLock lock(&mu_);
    tasks_.push_back(std::move(task));
  }
  // The shared matrix DownloadShared serves (rows x cols).
  void Serve(mf::Matrix shared) {
    absl::MutexLock lock(&mu_);
    shared_ = std::move(shared);
  }

  // Waits (bounded) until `count` of the records satisfy the predicate.
  bool AwaitReplies(size_t count) {
    return Await([&] { return replies_.size() >= count; });
  }
  bool AwaitUploads(size_t count) {
    return Await([&] { return uploads_.size() >= count; });
  }
  bool AwaitReports(size_t count) {
    return Await([&] { return reports_.size() >= count; });
  }

  std::vector<v1::OfferReply> replies() {
    absl::MutexLock lock(&mu_);
    return replies_;
  }
  // Each upload's chunks, serialized: the exact bytes that left the party.
  std::vector<std::string> uploads() {
    absl::MutexLock lock(&mu_);
    return uploads_;
  }
  std::vector<v1::PrivacyReport> reports() {
    absl::MutexLock lock(&mu_);
    return reports_;
  }

  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest*,
                        v1::RegisterResponse* resp) override {
    resp->set_max_chunk_values(kChunk);
    resp->set_liveness_seconds(30);
    return grpc::Status::OK;
  }
  grpc::Status GetTask(grpc::ServerContext* context, const v1::GetTaskRequest*,
                       v1::Task* task) override {
    absl::MutexLock lock(&mu_);
    // A short long-poll, so a stopping party is not held up.
    mu_.AwaitWithTimeout(absl::Condition(this, &FakeCoordinator::HasTask), absl::Milliseconds(100));
    // The poll of a party that stopped meanwhile (its call cancelled) must
    // not take the task queued for the restarted one: that task would be lost.
    if (context->IsCancelled()) return grpc::Status::CANCELLED;
    if (tasks_.empty()) {
      task->set_kind(v1::TASK_KIND_IDLE);
      return grpc::Status::OK;
    }
    *task = std::move(tasks_.front());
    tasks_.pop_front();
    served_.push_back(absl::Now());
    return grpc::Status::OK;
  }
  // When each queued task was handed out, in order.
  std::vector<absl::Time> served() {
    absl::MutexLock lock(&mu_);
    return served_;
  }
  grpc::Status ReplyOffer(grpc::ServerContext*, const v1::OfferReply* reply, v1::Ack*) override {
    absl::MutexLock lock(&mu_);
    replies_.push_back(*reply);
    return grpc::Status::OK;
  }
  int download_calls() {
    absl::MutexLock lock(&mu_);
    return download_calls_;
  }

  grpc::Status DownloadShared(grpc::ServerContext*, const v1::DownloadRequest* req,
                              grpc::ServerWriter<v1::MatrixChunk>* writer) override {
    mf::Matrix shared;
    {
      absl::MutexLock lock(&mu_);
      ++download_calls_;
      shared = shared_;
    }
    for (const v1::MatrixChunk& c :
         net::EncodeMatrix(shared, req->job_id(), req->round(), kChunk)) {
      writer->Write(c);
    }
    return grpc::Status::OK;
  }
  // A report riding on an upload is recorded (upload_reports) and, when
  // `take` (as fedmf-server does), taken like a ReportPrivacy call; otherwise
  // it is ignored, as a server from before that field would.
  void TakeReportsOnUpload(bool take) {
    absl::MutexLock lock(&mu_);
    take_reports_ = take;
  }
  std::vector<v1::PrivacyReport> upload_reports() {
    absl::MutexLock lock(&mu_);
    return upload_reports_;
  }
  int report_calls() {
    absl::MutexLock lock(&mu_);
    return report_calls_;
  }

  // When on (as fedmf-server), an upload that asks for it (await_next_task)
  // gets the next queued task on its response, waiting as GetTask does;
  // otherwise the flag is ignored, as a server from before it would.
  void HandOverOnUpload(bool on) {
    absl::MutexLock lock(&mu_);
    hand_over_ = on;
  }
  // Per upload: whether it asked for the next task.
  std::vector<bool> upload_asked_next() {
    absl::MutexLock lock(&mu_);
    return asked_next_;
  }
  int handed_over() {
    absl::MutexLock lock(&mu_);
    return handed_over_;
  }

  grpc::Status UploadUpdate(grpc::ServerContext*, grpc::ServerReader<v1::MatrixChunk>* reader,
                            v1::UploadResponse* resp) override {
    std::string bytes;  // the matrix's chunks, without the report and the ask
    std::optional<v1::PrivacyReport> report;
    bool asked_next = false;
    v1::MatrixChunk chunk;
    while (reader->Read(&chunk)) {
      if (chunk.has_report()) report = chunk.report();
      chunk.clear_report();
      asked_next |= chunk.await_next_task();
      chunk.clear_await_next_task();
      bytes += chunk.SerializeAsString();
    }
    resp->set_accepted(true);
    absl::MutexLock lock(&mu_);
    uploads_.push_back(std::move(bytes));
    asked_next_.push_back(asked_next);
    if (report.has_value()) {
      upload_reports_.push_back(*report);
      if (take_reports_) {
        reports_.push_back(*report);
        resp->set_report_taken(true);
      }
    }
    if (hand_over_ && asked_next) {
      mu_.AwaitWithTimeout(absl::Condition(this, &FakeCoordinator::HasTask),
                           absl::Milliseconds(100));
      if (tasks_.empty()) {
        resp->mutable_next_task()->set_kind(v1::TASK_KIND_IDLE);
      } else {
        *resp->mutable_next_task() = std::move(tasks_.front());
        tasks_.pop_front();
        ++handed_over_;
      }
    }
    return grpc::Status::OK;
  }
  grpc::Status ReportPrivacy(grpc::ServerContext*, const v1::PrivacyReport* report,
                             v1::Ack*) override {
    absl::MutexLock lock(&mu_);
    ++report_calls_;
    reports_.push_back(*report);
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*, v1::Ack*) override {
    return grpc::Status::OK;
  }

 private:
  bool HasTask() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !tasks_.empty(); }
  template <typename Pred>
  bool Await(Pred pred) {
    absl::MutexLock lock(&mu_);
    struct Ctx {
      Pred* pred;
      static bool Call(Ctx* c) { return (*c->pred)(); }
    } ctx{&pred};
    return mu_.AwaitWithTimeout(absl::Condition(&Ctx::Call, &ctx), absl::Seconds(60));
  }

  absl::Mutex mu_;
  std::deque<v1::Task> tasks_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> served_ ABSL_GUARDED_BY(mu_);
  mf::Matrix shared_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::OfferReply> replies_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> uploads_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::PrivacyReport> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::PrivacyReport> upload_reports_ ABSL_GUARDED_BY(mu_);
  bool take_reports_ ABSL_GUARDED_BY(mu_) = false;
  bool hand_over_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<bool> asked_next_ ABSL_GUARDED_BY(mu_);
  int handed_over_ ABSL_GUARDED_BY(mu_) = 0;
  int report_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int download_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

fmf::JobConfig HflJob(const std::string& id) {
  fmf::JobConfig c;
  c.job_id = id;
  c.setting = fmf::Setting::kHfl;
  c.split = fmf::SplitKind::kHorizontal;
  c.rounds = 2;
  c.dim = kDim;
  c.epsilon = 1.0;
  c.rating_max = 5;
  c.pretrain_epochs = 2;
  c.finetune_epochs = 2;
  c.granularity = fmf::Granularity::kUser;
  return c;
}

v1::Task Offer(const fmf::JobConfig& c) {
  v1::Task t;
  t.set_kind(v1::TASK_KIND_OFFER);
  t.set_job_id(c.job_id);
  *t.mutable_spec() = net::SpecFromJobConfig(c);
  t.mutable_spec()->add_roster("p0");
  t.mutable_spec()->add_roster("p1");
  return t;
}

v1::Task Task(v1::TaskKind kind, const fmf::JobConfig& c, int32_t round) {
  v1::Task t = Offer(c);
  t.set_kind(kind);
  t.set_round(round);
  return t;
}

// A ROUND task that carries `m` as its shared matrix (as fedmf-server inlines
// a small one).
v1::Task InlinedRound(const fmf::JobConfig& c, int32_t round, const mf::Matrix& m) {
  v1::Task t = Task(v1::TASK_KIND_ROUND, c, round);
  for (const v1::MatrixChunk& chunk : net::EncodeMatrix(m, c.job_id, round, kChunk)) {
    *t.add_shared() = chunk;
  }
  return t;
}

class PartyAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    config_.name = "p0";
    config_.tls.insecure = true;
    config_.data.spec = kData;
    config_.data.parties = 2;
    config_.data.index = 0;
    config_.data.rating_min = 1;
    config_.data.rating_max = 5;
    config_.policy.max_epsilon = 4;
    config_.policy.report_metrics = true;
    config_.policy.allowed_partners = {"p1"};  // the roster of Offer()
    config_.state_dir = dir_;
  }
  void TearDown() override {
    StopAgent();
    server_->Shutdown();
  }

  // Opens the ledger store and runs a fresh agent on it (a process start).
  void StartAgent() {
    auto store = PartyStore::Open(dir_ + "/p0.ledger.db");
    ASSERT_THAT(store.status(), IsOk());
    store_ = *std::move(store);
    agent_ = std::make_unique<PartyAgent>(config_, store_.get(),
                                          server_->InProcessChannel(grpc::ChannelArguments()));
    ASSERT_THAT(agent_->Init(), IsOk());
    stop_ = false;
    thread_ = std::thread([this] { agent_->Run(&stop_); });
  }
  void StopAgent() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    agent_.reset();
    store_.reset();
  }

  // A catalogue of `items` ids sku0, sku1, ... in the test's directory.
  std::string WriteCatalogue(int items) const {
    const std::string path = dir_ + "/items.txt";
    std::ofstream out(path);
    for (int i = 0; i < items; ++i) out << "sku" << i << "\n";
    return path;
  }

  // V(0) as a server would send it: in the projection's bounds.
  void ServeV(int items, double value = 0.3) {
    fake_.Serve(mf::Matrix::Constant(items, kDim, value));
  }

  // Offers `c`, expects acceptance and serves V of the announced size.
  void Accept(const fmf::JobConfig& c) {
    const size_t before = fake_.replies().size();
    fake_.Push(Offer(c));
    ASSERT_TRUE(fake_.AwaitReplies(before + 1));
    const v1::OfferReply reply = fake_.replies().back();
    ASSERT_TRUE(reply.accept()) << reply.refusal();
    EXPECT_EQ(reply.job_id(), c.job_id);
    EXPECT_GT(reply.users(), 0);
    EXPECT_EQ(reply.items(), reply.global_items());  // HFL: every item
    ServeV(reply.global_items());
  }

  const ::fedmf::testing::ScopedTempDir tmp_{"fedmf-agent-"};
  const std::string dir_ = tmp_.path();
  FakeCoordinator fake_;
  std::unique_ptr<grpc::Server> server_;
  PartyConfig config_;
  std::unique_ptr<PartyStore> store_;
  std::unique_ptr<PartyAgent> agent_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(PartyAgentTest, OffersThePolicyOrTheDeclaredRangeForbidsAreRefusedWithTheReason) {
  StartAgent();
  fmf::JobConfig over_budget = HflJob("greedy");
  over_budget.epsilon = 6;
  over_budget.granularity = fmf::Granularity::kUser;  // the policy's budget is 4
  fmf::JobConfig wrong_range = HflJob("range");
  wrong_range.rating_max = 10;  // the party declared 1..5
  fmf::JobConfig loose = HflJob("loose");
  loose.delta = 1e-3;  // the policy accepts at most 1e-5
  fake_.Push(Offer(over_budget));
  fake_.Push(Offer(wrong_range));
  fake_.Push(Offer(loose));
  ASSERT_TRUE(fake_.AwaitReplies(3));
  const std::vector<v1::OfferReply> r = fake_.replies();
  for (const v1::OfferReply& reply : r) {
    EXPECT_FALSE(reply.accept()) << reply.job_id();
    EXPECT_EQ(reply.users(), 0) << reply.job_id() << ": sizes leave only with an acceptance";
  }
  EXPECT_THAT(r[0].refusal(), HasSubstr("exceeds the policy cap 4"));
  EXPECT_THAT(r[1].refusal(), HasSubstr("rating_max"));
  EXPECT_THAT(r[2].refusal(), HasSubstr("job delta 0.001 exceeds the policy's 1e-05"));
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), 0);
}

// The data validated at start serves the first job without a second read,
// but only while its file is unchanged: rewritten after the start, the file
// is read again at the offer.
TEST_F(PartyAgentTest, TheFirstJobReadsTheDataFileAgainWhenItChangedAfterTheStart) {
  const std::string file = dir_ + "/ratings.csv";
  auto write_users = [&file](int users) {
    std::ofstream out(file, std::ios::trunc);
    for (int u = 0; u < users; ++u) {
      for (int i = 0; i < 8; ++i) out << "u" << u << ",i" << i << "," << 1 + (u + i) % 5 << "\n";
    }
  };
  write_users(6);
  config_.data.spec = "csv:" + file;
  config_.data.parties = 2;  // share 0 of the file, which both parties read
  StartAgent();
  fake_.Push(Offer(HflJob("before")));
  ASSERT_TRUE(fake_.AwaitReplies(1));
  ASSERT_TRUE(fake_.replies()[0].accept()) << fake_.replies()[0].refusal();
  EXPECT_EQ(fake_.replies()[0].global_users(), 6);
  StopAgent();

  StartAgent();
  write_users(9);  // after Init's load, before the offer
  fake_.Push(Offer(HflJob("after")));
  ASSERT_TRUE(fake_.AwaitReplies(2));
  ASSERT_TRUE(fake_.replies()[1].accept()) << fake_.replies()[1].refusal();
  EXPECT_EQ(fake_.replies()[1].global_users(), 9);
}

TEST_F(PartyAgentTest, ARoundIsChargedOnceAndAskedAgainResendsThePersistedBytes) {
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  // The acceptance charged the DP release of the party's user count.
  const int accepted = agent_->LedgerSnapshot().entries_size();
  ASSERT_EQ(accepted, 1);
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 0));
  ASSERT_TRUE(fake_.AwaitReports(1));
  ASSERT_EQ(fake_.uploads().size(), 1u);
  ASSERT_EQ(agent_->LedgerSnapshot().entries_size(), accepted + 1);
  const v1::PrivacyReport first = fake_.reports()[0];
  EXPECT_GT(first.job_epsilon(), 0);
  EXPECT_LE(first.job_epsilon(), job.epsilon);
  EXPECT_FALSE(first.finished());

  // The server asks again (a lost response): no new charge, the same bytes.
  // The party's noise is OS-seeded, so a recomputed round would differ.
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 0));
  ASSERT_TRUE(fake_.AwaitReports(2));
  ASSERT_EQ(fake_.uploads().size(), 2u);
  EXPECT_EQ(fake_.uploads()[1], fake_.uploads()[0]);
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), accepted + 1);
  EXPECT_EQ(fake_.reports()[1].job_epsilon(), first.job_epsilon());

  // After a restart the ledger is reloaded and the round still resends.
  StopAgent();
  StartAgent();
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), accepted + 1);
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 0));
  ASSERT_TRUE(fake_.AwaitReports(3));
  ASSERT_EQ(fake_.uploads().size(), 3u);
  EXPECT_EQ(fake_.uploads()[2], fake_.uploads()[0]);
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), accepted + 1);

  // The next round is new: charged, and different bytes.
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 1));
  ASSERT_TRUE(fake_.AwaitReports(4));
  ASSERT_EQ(fake_.uploads().size(), 4u);
  EXPECT_NE(fake_.uploads()[3], fake_.uploads()[0]);
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), accepted + 2);
  EXPECT_GT(fake_.reports()[3].job_epsilon(), first.job_epsilon());
  EXPECT_LE(fake_.reports()[3].job_epsilon(), job.epsilon * (1 + 1e-9));
}

// This fake ignores a report riding on the upload (a server from before
// UploadResponse.report_taken), so the party sent each round's report again
// with ReportPrivacy: the same report, byte for byte.
TEST_F(PartyAgentTest, AReportTheServerDidNotTakeIsSentByItself) {
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  for (int32_t round = 0; round < 2; ++round) {
    fake_.Push(Task(v1::TASK_KIND_ROUND, job, round));
    ASSERT_TRUE(fake_.AwaitReports(round + 1));
  }
  EXPECT_EQ(fake_.report_calls(), 2);
  ASSERT_EQ(fake_.upload_reports().size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(fake_.upload_reports()[k].SerializeAsString(),
              fake_.reports()[k].SerializeAsString());
  }
}

// The server may put the round's matrix on the task (one call fewer per
// round). The party uses it without a download, and checks it exactly as a
// download: a tampered inline matrix is refused before anything is charged
// or sent, and the server's next ask is answered.
TEST_F(PartyAgentTest, AnInlinedSharedMatrixIsUsedAndCheckedLikeADownload) {
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  const int32_t items = fake_.replies().back().global_items();
  const int charged = agent_->LedgerSnapshot().entries_size();
  const int downloads = fake_.download_calls();
  mf::Matrix bad = mf::Matrix::Constant(items, kDim, 0.3);
  bad(1, 2) = std::numeric_limits<double>::quiet_NaN();
  fake_.Push(InlinedRound(job, 0, bad));
  fake_.Push(InlinedRound(job, 0, mf::Matrix::Constant(items - 1, kDim, 0.3)));  // wrong shape
  fake_.Push(InlinedRound(job, 0, mf::Matrix::Constant(items, kDim, 0.3)));
  ASSERT_TRUE(fake_.AwaitUploads(1));
  ASSERT_TRUE(fake_.AwaitReports(1));
  // The three tasks ran in order: only the good one released, once.
  EXPECT_EQ(fake_.uploads().size(), 1u);
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), charged + 1);
  EXPECT_EQ(fake_.download_calls(), downloads) << "an inlined matrix needs no download";
}

// A server that keeps handing out a task the party refuses gets it asked
// for again at once the first time (a new task may follow), then only after
// the party's backoff (200 ms, then 400 ms, plus jitter), not in a loop
// until the round's deadline. The refusals charge nothing; the good task
// that follows is answered.
TEST_F(PartyAgentTest, ATaskRefusedTwiceIsAskedForAgainOnlyAfterABackoff) {
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  const int32_t items = fake_.replies().back().global_items();
  const int charged = agent_->LedgerSnapshot().entries_size();
  mf::Matrix bad = mf::Matrix::Constant(items, kDim, 0.3);
  bad(0, 0) = std::numeric_limits<double>::quiet_NaN();
  const size_t before = fake_.served().size();
  for (int i = 0; i < 3; ++i) fake_.Push(InlinedRound(job, 0, bad));
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 0));
  ASSERT_TRUE(fake_.AwaitUploads(1));
  const std::vector<absl::Time> served = fake_.served();
  ASSERT_EQ(served.size(), before + 4);
  EXPECT_GE(served[before + 2] - served[before + 1], absl::Milliseconds(200));
  EXPECT_GE(served[before + 3] - served[before + 2], absl::Milliseconds(400));
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), charged + 1);
}

// The upload's header names the party: without TLS (this test's channel) it
// is the only name fedmf-server has for the uploader.
TEST_F(PartyAgentTest, TheUploadHeaderNamesTheParty) {
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 0));
  ASSERT_TRUE(fake_.AwaitUploads(1));
  // The recorded bytes are the chunks back to back, which parse as one merged
  // chunk; only the first chunk has a header.
  v1::MatrixChunk merged;
  ASSERT_TRUE(merged.ParseFromString(fake_.uploads()[0]));
  ASSERT_TRUE(merged.has_header());
  EXPECT_EQ(merged.header().party(), "p0");
}

// fedmf-server takes the round's report on the upload: one call fewer per
// round. What the party sent is the report the call would carry (after the
// round's charge); Stage 3's report, with no upload to ride on, is a call.
TEST_F(PartyAgentTest, ARoundsReportRidesOnTheUploadWhenTheServerTakesIt) {
  fake_.TakeReportsOnUpload(true);
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  for (int32_t round = 0; round < job.rounds; ++round) {
    fake_.Push(Task(v1::TASK_KIND_ROUND, job, round));
    ASSERT_TRUE(fake_.AwaitReports(round + 1));
  }
  EXPECT_EQ(fake_.report_calls(), 0);
  const std::vector<v1::PrivacyReport> reports = fake_.reports();
  ASSERT_EQ(reports.size(), 2u);
  for (int32_t round = 0; round < 2; ++round) {
    EXPECT_EQ(reports[round].party(), "p0");
    EXPECT_EQ(reports[round].job_id(), "j");
    EXPECT_EQ(reports[round].round(), round);
    EXPECT_FALSE(reports[round].finished());
    EXPECT_TRUE(reports[round].has_test_mse());  // the policy opts in
  }
  EXPECT_GT(reports[0].job_epsilon(), 0);
  EXPECT_GT(reports[1].job_epsilon(), reports[0].job_epsilon());
  EXPECT_LE(reports[1].job_epsilon(), job.epsilon * (1 + 1e-9));
  EXPECT_GT(reports[1].steps(), reports[0].steps());
  fake_.Push(Task(v1::TASK_KIND_FINISH, job, job.rounds));
  ASSERT_TRUE(fake_.AwaitReports(3));
  EXPECT_EQ(fake_.report_calls(), 1);
  EXPECT_TRUE(fake_.reports()[2].finished());
}

// Every upload asks for the next task; a server that hands it over on the
// response spares the party its GetTask: round 1 and FINISH arrive that way
// and are run, charged and reported exactly as if asked for (round 1 is a
// new release: new bytes, one more ledger entry).
TEST_F(PartyAgentTest, TheNextTaskHandedOverOnTheUploadsResponseIsRunWithoutAGetTask) {
  fake_.TakeReportsOnUpload(true);
  fake_.HandOverOnUpload(true);
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  const int charged = agent_->LedgerSnapshot().entries_size();
  const size_t served = fake_.served().size();
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 0));
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 1));
  fake_.Push(Task(v1::TASK_KIND_FINISH, job, job.rounds));
  ASSERT_TRUE(fake_.AwaitReports(3));
  ASSERT_EQ(fake_.uploads().size(), 2u);
  EXPECT_NE(fake_.uploads()[1], fake_.uploads()[0]);
  EXPECT_EQ(fake_.upload_asked_next(), (std::vector<bool>{true, true}));
  // Only round 0 went through GetTask; round 1 and FINISH were handed over.
  EXPECT_EQ(fake_.served().size(), served + 1);
  EXPECT_EQ(fake_.handed_over(), 2);
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), charged + 2);
  const std::vector<v1::PrivacyReport> reports = fake_.reports();
  EXPECT_EQ(reports[1].round(), 1);
  EXPECT_TRUE(reports[2].finished());
}

TEST_F(PartyAgentTest, FinishTrainsLocallyReportsOnceOptedInAndServesTheModel) {
  StartAgent();
  const fmf::JobConfig job = HflJob("j");
  Accept(job);
  EXPECT_THAT(agent_->ExportModel("j").status(),
              fedmf::testing::StatusIs(absl::StatusCode::kFailedPrecondition));
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 0));
  fake_.Push(Task(v1::TASK_KIND_ROUND, job, 1));
  fake_.Push(Task(v1::TASK_KIND_FINISH, job, 2));
  ASSERT_TRUE(fake_.AwaitReports(3));
  const v1::PrivacyReport done = fake_.reports()[2];
  EXPECT_TRUE(done.finished());
  ASSERT_TRUE(done.has_test_mse());  // report_metrics: the party opted in
  EXPECT_GT(done.test_count(), 0);
  EXPECT_GT(done.test_mse(), 0);
  EXPECT_LT(done.test_mse(), 16);  // inside the 1..5 range's worst case

  auto model = agent_->ExportModel("j");
  ASSERT_THAT(model.status(), IsOk());
  EXPECT_EQ(model->dim(), kDim);
  ASSERT_GT(model->user_ids_size(), 0);
  EXPECT_EQ(model->u().size(), model->user_ids_size() * kDim * sizeof(double));
  auto recs = agent_->Recommend("j", model->user_ids(0), 3);
  ASSERT_THAT(recs.status(), IsOk());
  EXPECT_EQ(recs->size(), 3u);
  EXPECT_THAT(agent_->Recommend("j", "no-such-user", 3).status(),
              fedmf::testing::StatusIs(absl::StatusCode::kNotFound, HasSubstr("no-such-user")));
}

// ------------------------------------------------------------------ issue #54

// A party with a file of its own and an item catalogue (HFL partners): its
// reply carries the catalogue's size (public) and its DP weight, never a count
// of its own users: a file with one user fewer sends the same shape.
TEST_F(PartyAgentTest, AnHflPartyWithACatalogueSendsNoUserCountOfItsFile) {
  const std::string catalogue = WriteCatalogue(12);
  auto digest = data::Catalogue::Load(catalogue);
  ASSERT_THAT(digest, IsOk());
  const std::string file = dir_ + "/own.csv";
  auto write_users = [&file](int users) {
    std::ofstream out(file, std::ios::trunc);
    for (int u = 0; u < users; ++u) {
      for (int i = 0; i < 8; ++i)
        out << "u" << u << ",sku" << (u + i) % 12 << "," << 1 + i % 5 << "\n";
    }
  };
  config_.data.spec = "csv:" + file;
  config_.data.parties = 1;
  config_.data.catalogue = catalogue;
  std::vector<v1::OfferReply> replies;
  for (const int users : {30, 29}) {
    write_users(users);
    StartAgent();
    fmf::JobConfig job = HflJob(absl::StrCat("cat-", users));
    job.item_catalogue = digest->digest();
    const size_t before = fake_.replies().size();
    fake_.Push(Offer(job));
    ASSERT_TRUE(fake_.AwaitReplies(before + 1));
    replies.push_back(fake_.replies().back());
    ASSERT_TRUE(replies.back().accept()) << replies.back().refusal();
    StopAgent();
  }
  for (const v1::OfferReply& r : replies) {
    EXPECT_EQ(r.global_users(), 0) << "the party's user count left in the clear";
    EXPECT_EQ(r.global_items(), 12);  // the catalogue's
    EXPECT_EQ(r.items(), 12);
    EXPECT_GE(r.users(), 1);  // the DP size release's estimate
  }
}

// A roster naming a party this party does not train with is refused before
// anything is read or charged; the refusal names the stranger.
TEST_F(PartyAgentTest, ARosterWithAnUnlistedPartnerIsRefusedNamingIt) {
  StartAgent();
  v1::Task offer = Offer(HflJob("stranger"));
  offer.mutable_spec()->add_roster("mallory");
  fake_.Push(offer);
  ASSERT_TRUE(fake_.AwaitReplies(1));
  const v1::OfferReply r = fake_.replies()[0];
  EXPECT_FALSE(r.accept());
  EXPECT_THAT(r.refusal(), HasSubstr("'mallory'"));
  EXPECT_THAT(r.refusal(), HasSubstr("allowed_partners"));
  EXPECT_EQ(r.users(), 0);
  EXPECT_EQ(agent_->LedgerSnapshot().entries_size(), 0);
  // Control: the listed partner alone is fine.
  Accept(HflJob("known"));
}

// A failure on the party's data reaches the server as the rule and the fix
// only: no item id, no count, no path (those stay in the party's log).
TEST_F(PartyAgentTest, ARefusalCausedByTheDataCarriesNoneOfIt) {
  const std::string catalogue = WriteCatalogue(5);
  auto digest = data::Catalogue::Load(catalogue);
  ASSERT_THAT(digest, IsOk());
  const std::string file = dir_ + "/customer-file.csv";
  // The start-up check (issue 56) refuses a file with no catalogue item, so
  // the party starts on a good file, which is then replaced: the job reads
  // it again (a changed data.spec) and fails on the data then.
  {
    std::ofstream out(file);
    for (int u = 0; u < 4; ++u) out << "u" << u << ",sku" << u << "," << 1 + u << "\n";
  }
  config_.data.spec = "csv:" + file;
  config_.data.parties = 1;
  config_.data.catalogue = catalogue;
  StartAgent();
  {
    std::ofstream out(file, std::ios::trunc);
    for (int u = 0; u < 4; ++u) out << "u" << u << ",jane.doe@example.com," << 1 + u << "\n";
  }
  fmf::JobConfig job = HflJob("no-overlap");
  job.item_catalogue = digest->digest();
  fake_.Push(Offer(job));
  ASSERT_TRUE(fake_.AwaitReplies(1));
  const v1::OfferReply r = fake_.replies()[0];
  EXPECT_FALSE(r.accept());
  EXPECT_THAT(r.refusal(), HasSubstr("party's log"));
  for (const std::string& secret :
       {std::string("jane.doe"), std::string("customer-file"), dir_, std::string("none of its")}) {
    EXPECT_EQ(r.refusal().find(secret), std::string::npos) << secret << " in: " << r.refusal();
  }
}

// Ledger entries carry their unit; per-user charges never show up in the
// per-rating epsilon (and vice versa).
TEST_F(PartyAgentTest, LedgerEntriesCarryTheirGranularity) {
  StartAgent();
  Accept(HflJob("per-user"));  // HFL is per user: the size release is charged
  const v1::LedgerResponse ledger = agent_->LedgerSnapshot();
  ASSERT_EQ(ledger.entries_size(), 1);
  EXPECT_EQ(ledger.entries(0).granularity(), "user");
  EXPECT_GT(ledger.epsilon_per_user(), 0);
  EXPECT_EQ(ledger.epsilon_per_rating(), 0);
  EXPECT_EQ(ledger.epsilon_spent(), ledger.epsilon_per_user());
}

}  // namespace
}  // namespace fedmf::party
