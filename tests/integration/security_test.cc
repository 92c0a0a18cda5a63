// Acceptance 4: mutual TLS and authorization on the real server.
//  (a) no client certificate and (b) a certificate from another CA cannot
//      complete any RPC (the handshake fails: UNAVAILABLE);
//  (c) a valid certificate for a party outside the job's roster gets
//      PERMISSION_DENIED for the running job;
//  (d) a roster party cannot speak for another party;
//  (e) malformed uploads from a roster party are rejected with the right
//      code, the server keeps running and the job still finishes.
// For (c)-(e) the test itself is party-0 (its own gRPC client with party-0's
// certificate); parties 1 and 2 are real fedmf-party processes.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/net/credentials.h"
#include "common/pki/ca.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {
namespace fs = std::filesystem;

std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 10) {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return c;
}

const std::vector<std::string> kSans{"localhost", "127.0.0.1"};

std::shared_ptr<grpc::Channel> ChannelWith(int port, const grpc::SslCredentialsOptions& ssl) {
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("server");
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port), grpc::SslCredentials(ssl),
                                   args);
}

// What a party or operator holding `channel` can do, one RPC each.
grpc::StatusCode RegisterCode(const std::shared_ptr<grpc::Channel>& channel,
                              const std::string& party) {
  auto stub = v1::Coordinator::NewStub(channel);
  v1::RegisterRequest req;
  req.set_party(party);
  v1::RegisterResponse resp;
  return stub->Register(Ctx().get(), req, &resp).error_code();
}

grpc::StatusCode GetJobCode(const std::shared_ptr<grpc::Channel>& channel, const std::string& id) {
  auto stub = v1::Operator::NewStub(channel);
  v1::GetJobRequest req;
  req.set_job_id(id);
  v1::JobStatus resp;
  return stub->GetJob(Ctx().get(), req, &resp).error_code();
}

// ------------------------------------------------------------ a party by hand

class ManualParty {
 public:
  ManualParty(std::shared_ptr<grpc::Channel> channel, std::string name)
      : stub_(v1::Coordinator::NewStub(std::move(channel))), name_(std::move(name)) {}

  grpc::Status Register() {
    v1::RegisterRequest req;
    req.set_party(name_);
    v1::RegisterResponse resp;
    grpc::Status s = stub_->Register(Ctx().get(), req, &resp);
    if (s.ok() && resp.max_chunk_values() > 0) max_chunk_values_ = resp.max_chunk_values();
    return s;
  }

  // Long-polls until a task that is not IDLE (bounded).
  absl::StatusOr<v1::Task> NextTask(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      v1::GetTaskRequest req;
      req.set_party(name_);
      v1::Task task;
      grpc::Status s = stub_->GetTask(Ctx(30).get(), req, &task);
      if (!s.ok()) return net::FromGrpc(s);
      if (task.kind() != v1::TASK_KIND_IDLE) return task;
    }
    return absl::DeadlineExceededError("no task");
  }

  grpc::Status ReplyOffer(const v1::OfferReply& reply) {
    v1::Ack ack;
    return stub_->ReplyOffer(Ctx().get(), reply, &ack);
  }

  grpc::Status Report(const v1::PrivacyReport& report) {
    v1::Ack ack;
    return stub_->ReportPrivacy(Ctx().get(), report, &ack);
  }

  grpc::Status Download(const std::string& party, const std::string& job_id, int32_t round,
                        mf::Matrix* out) {
    v1::DownloadRequest req;
    req.set_party(party);
    req.set_job_id(job_id);
    req.set_round(round);
    auto ctx = Ctx(30);
    auto reader = stub_->DownloadShared(ctx.get(), req);
    net::MatrixAssembler assembler(job_id, round, -1, -1, max_chunk_values_);
    v1::MatrixChunk chunk;
    absl::Status first;
    while (reader->Read(&chunk)) {
      if (auto s = assembler.Add(chunk); !s.ok() && first.ok()) first = s;
    }
    grpc::Status gs = reader->Finish();
    if (!gs.ok()) return gs;
    if (!first.ok()) return net::ToGrpc(first);
    auto m = assembler.Finish();
    if (!m.ok()) return net::ToGrpc(m.status());
    *out = std::move(*m);
    return grpc::Status::OK;
  }

  grpc::Status Upload(const std::vector<v1::MatrixChunk>& chunks, v1::UploadResponse* resp) {
    auto ctx = Ctx(30);
    auto writer = stub_->UploadUpdate(ctx.get(), resp);
    for (const v1::MatrixChunk& c : chunks) {
      if (!writer->Write(c)) break;  // the server already answered
    }
    writer->WritesDone();
    return writer->Finish();
  }

  int32_t max_chunk_values() const { return max_chunk_values_; }
  const std::string& name() const { return name_; }

 private:
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  std::string name_;
  int32_t max_chunk_values_ = net::kDefaultMaxChunkValues;
};

class SecurityTest : public ClusterTest {};

// What a test needs of the running job "guarded" to talk about it.
struct GuardedJob {
  std::string id;
  v1::OfferReply accept;  // party-0's acceptance
  mf::Matrix shared;      // round 0's input
  int32_t chunk_values = 0;
  std::string address, cert_dir;
  std::vector<v1::MatrixChunk> Encode(const mf::Matrix& m, int32_t round = 0,
                                      const std::string& job = "") const {
    return net::EncodeMatrix(m, job.empty() ? id : job, round, chunk_values);
  }
};

// (c) party-9: certified, not in the roster: refused everywhere, told nothing.
void ExpectOutsiderRefused(ManualParty& p9, const std::shared_ptr<grpc::Channel>& ch9,
                           const GuardedJob& job) {
  SCOPED_TRACE("party-9");
  mf::Matrix out;
  EXPECT_EQ(p9.Download("party-9", job.id, 0, &out).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::UploadResponse resp;
  EXPECT_EQ(p9.Upload(job.Encode(job.shared), &resp).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::OfferReply reply = job.accept;
  reply.set_party("party-9");
  EXPECT_EQ(p9.ReplyOffer(reply).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  v1::PrivacyReport report;
  report.set_party("party-9");
  report.set_job_id(job.id);
  EXPECT_EQ(p9.Report(report).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // ... and is told nothing about the job.
  v1::GetTaskRequest req;
  req.set_party("party-9");
  v1::Task idle;
  auto ctx = Ctx(30);
  ASSERT_THAT(v1::Coordinator::NewStub(ch9)->GetTask(ctx.get(), req, &idle), IsOk());
  EXPECT_EQ(idle.kind(), v1::TASK_KIND_IDLE);
  EXPECT_FALSE(idle.has_spec());
  // A party certificate is not an operator's.
  EXPECT_EQ(GetJobCode(ch9, job.id), grpc::StatusCode::PERMISSION_DENIED);
  // Nor is the server's own certificate.
  auto as_server =
      net::MakeChannel(job.address, net::TlsConfig{false, job.cert_dir, "server"}, "server");
  ASSERT_THAT(as_server, IsOk());
  EXPECT_EQ(GetJobCode(*as_server, job.id), grpc::StatusCode::PERMISSION_DENIED);
}

// (d) party-0 speaking for party-1: refused, and logged by the server.
void ExpectImpersonationRefused(ManualParty& p0, const GuardedJob& job) {
  SCOPED_TRACE("party-0 as party-1");
  v1::PrivacyReport forged;
  forged.set_party("party-1");
  forged.set_job_id(job.id);
  forged.set_round(0);
  forged.set_epsilon_spent(123.0);
  EXPECT_EQ(p0.Report(forged).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  v1::OfferReply reply = job.accept;
  reply.set_party("party-1");
  EXPECT_EQ(p0.ReplyOffer(reply).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  mf::Matrix out;
  EXPECT_EQ(p0.Download("party-1", job.id, 0, &out).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // The forged report riding on party-0's own upload: the whole upload is refused.
  std::vector<v1::MatrixChunk> upload = job.Encode(job.shared);
  *upload.front().mutable_report() = forged;
  v1::UploadResponse resp;
  EXPECT_EQ(p0.Upload(upload, &resp).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_FALSE(resp.accepted());
  // An upload whose header names party-1: refused, naming the field.
  std::vector<v1::MatrixChunk> named = job.Encode(job.shared);
  named.front().mutable_header()->set_party("party-1");
  v1::UploadResponse named_resp;
  const grpc::Status named_status = p0.Upload(named, &named_resp);
  EXPECT_EQ(named_status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(named_status.error_message(), ::testing::HasSubstr("header.party"));
  EXPECT_FALSE(named_resp.accepted());
}

// (e) A malformed upload for the open round, the status it must get and
// what its message must name.
struct UploadCase {
  std::string what;
  std::vector<v1::MatrixChunk> chunks;
  grpc::StatusCode want;
  std::string names;
};

std::vector<UploadCase> MalformedUploads(const GuardedJob& job) {
  const mf::Matrix& shared = job.shared;
  auto encode = [&](const mf::Matrix& m, int32_t round = 0, const std::string& other = "") {
    return job.Encode(m, round, other);
  };
  std::vector<UploadCase> cases;
  {
    auto c = encode(shared);
    EXPECT_GE(c.size(), 2u);
    c[1].mutable_values_f32()->RemoveLast();
    cases.push_back({"a chunk one value short", c, grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat(shared.size() - 1, " values, expected ", shared.size())});
  }
  {
    auto c = encode(shared);
    c[1].add_values_f32(0.5f);
    cases.push_back({"a chunk one value long", c, grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat(shared.size() + 1, " values, expected ", shared.size())});
  }
  {
    mf::Matrix m = shared;
    m(3, 4) = std::numeric_limits<double>::quiet_NaN();
    cases.push_back({"a NaN (checksum consistent)", encode(m), grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("non-finite value at position ", 3 * shared.cols() + 4)});
  }
  {
    mf::Matrix m = shared;
    m(1, 1) = std::numeric_limits<double>::infinity();
    cases.push_back({"an infinity", encode(m), grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("non-finite value at position ", shared.cols() + 1)});
  }
  cases.push_back({"the next round in the header", encode(shared, 1),
                   grpc::StatusCode::FAILED_PRECONDITION, "field 'round'"});
  cases.push_back({"a past round in the header", encode(shared, -1),
                   grpc::StatusCode::FAILED_PRECONDITION, "field 'round'"});
  cases.push_back({"another job in the header", encode(shared, 0, "not-this-job"),
                   grpc::StatusCode::FAILED_PRECONDITION, "field 'job_id'"});
  {
    mf::Matrix m = shared.topRows(shared.rows() - 1);
    cases.push_back({"one row too few", encode(m), grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("shape ", m.rows(), "x", m.cols())});
  }
  {
    mf::Matrix m = shared.leftCols(shared.cols() - 1);
    cases.push_back({"one column too few", encode(m), grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("shape ", m.rows(), "x", m.cols())});
  }
  {
    // Same values, header claims a transposed shape with a matching count.
    auto c = encode(shared);
    c[0].mutable_header()->set_rows(static_cast<int32_t>(shared.cols()));
    c[0].mutable_header()->set_cols(static_cast<int32_t>(shared.rows()));
    cases.push_back({"a transposed shape", c, grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("shape ", shared.cols(), "x", shared.rows())});
  }
  {
    auto c = encode(shared);
    std::string sha = c[0].header().sha256();
    sha[0] = static_cast<char>(sha[0] ^ 0x01);
    c[0].mutable_header()->set_sha256(sha);
    cases.push_back({"a wrong checksum", c, grpc::StatusCode::DATA_LOSS, "checksum mismatch"});
  }
  {
    // A value corrupted after the checksum was taken.
    auto c = encode(shared);
    c[1].set_values_f32(7, c[1].values_f32(7) * 0.5f);
    cases.push_back(
        {"a value changed in transit", c, grpc::StatusCode::DATA_LOSS, "checksum mismatch"});
  }
  {
    auto c = encode(shared);
    c[0].mutable_header()->set_sha256("short");
    cases.push_back({"a truncated checksum", c, grpc::StatusCode::INVALID_ARGUMENT, "32 bytes"});
  }
  {
    auto c = encode(shared);
    c.erase(c.begin());
    cases.push_back({"no header", c, grpc::StatusCode::INVALID_ARGUMENT, "field 'header'"});
  }
  cases.push_back({"an empty stream", {}, grpc::StatusCode::INVALID_ARGUMENT, "empty upload"});
  for (const int32_t round : {1, -1}) {
    auto c = encode(shared);
    v1::PrivacyReport* r = c[0].mutable_report();
    r->set_party("party-0");
    r->set_job_id(job.id);
    r->set_round(round);
    cases.push_back({absl::StrCat("a report for round ", round, " on round 0's upload"), c,
                     grpc::StatusCode::INVALID_ARGUMENT, "field 'report'"});
  }
  {
    auto c = encode(shared);
    const size_t chunks = c.size() - 1;  // after the header
    c.pop_back();
    cases.push_back({"a missing chunk", c, grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("received ", chunks - 1, " of ", chunks, " chunks")});
  }
  {
    auto c = encode(shared);
    c[0].mutable_header()->set_total_chunks(c[0].header().total_chunks() + 1);
    cases.push_back({"a wrong chunk count", c, grpc::StatusCode::INVALID_ARGUMENT, "total_chunks"});
  }
  {
    mf::Matrix m = shared;
    m(0, 0) = -0.25;
    cases.push_back({"a negative (unclipped) entry", encode(m), grpc::StatusCode::INVALID_ARGUMENT,
                     "negative value at row 0"});
  }
  {
    mf::Matrix m = shared;
    m.row(2).setConstant(10.0);  // norm^2 = 100 p > R
    cases.push_back({"a row over the clipping norm", encode(m), grpc::StatusCode::INVALID_ARGUMENT,
                     "row 2 has norm^2"});
  }
  return cases;
}

// Plays party-0 to the end: echoes the shared matrix each round, then
// reports Stage 3 (a NaN report first, which is refused).
void PlayToFinish(ManualParty& p0, const GuardedJob& job, int rounds) {
  // Each upload asks the server to hand over the next task on its response
  // (await_next_task, as fedmf-party does); an IDLE one (the poll ended
  // first) or none sends the party to GetTask.
  std::optional<v1::Task> handed;
  int handed_over = 0;
  for (int guard = 0; guard < 4 * rounds + 10; ++guard) {
    absl::StatusOr<v1::Task> next;
    if (handed.has_value() && handed->kind() != v1::TASK_KIND_IDLE) {
      next = *std::move(handed);
      ++handed_over;
    } else {
      next = p0.NextTask(absl::Seconds(60));
    }
    handed.reset();
    ASSERT_THAT(next, IsOk());
    if (next->kind() == v1::TASK_KIND_ROUND) {
      mf::Matrix m;
      ASSERT_THAT(p0.Download("party-0", job.id, next->round(), &m), IsOk());
      // The server inlines this small matrix on the task: the same values.
      ASSERT_GT(next->shared_size(), 0) << "round " << next->round();
      net::MatrixAssembler inlined(job.id, next->round(), static_cast<int32_t>(m.rows()),
                                   static_cast<int32_t>(m.cols()), job.chunk_values);
      for (const v1::MatrixChunk& c : next->shared()) ASSERT_THAT(inlined.Add(c), IsOk());
      auto from_task = inlined.Finish();
      ASSERT_THAT(from_task, IsOk());
      EXPECT_EQ(*from_task, m) << "round " << next->round();
      // The round's report rides on the upload (as fedmf-party sends it).
      std::vector<v1::MatrixChunk> chunks = job.Encode(m, next->round());
      v1::PrivacyReport* report = chunks.front().mutable_report();
      report->set_party("party-0");
      report->set_job_id(job.id);
      report->set_round(next->round());
      report->set_epsilon_spent(0.25 * (next->round() + 1));
      chunks.front().set_await_next_task(true);
      v1::UploadResponse resp;
      grpc::Status s = p0.Upload(chunks, &resp);
      ASSERT_THAT(s, IsOk()) << "round " << next->round() << ": " << s.error_message();
      EXPECT_TRUE(resp.report_taken()) << "round " << next->round();
      // The server answered with the next task (the loop checks it as any).
      EXPECT_TRUE(resp.has_next_task()) << "round " << next->round();
      if (resp.has_next_task()) handed = resp.next_task();
      continue;
    }
    ASSERT_EQ(next->kind(), v1::TASK_KIND_FINISH);
    EXPECT_EQ(next->round(), rounds);
    // The other parties are daemons that answer at once: party-0 closed most
    // rounds, so its upload's response carried the next round (or FINISH)
    // rather than an IDLE poll (0.5 s).
    EXPECT_GE(handed_over, 1) << "no round was handed over on an upload's response";
    mf::Matrix final_shared;
    ASSERT_THAT(p0.Download("party-0", job.id, next->round(), &final_shared), IsOk());
    v1::PrivacyReport nan_report;
    nan_report.set_party("party-0");
    nan_report.set_job_id(job.id);
    nan_report.set_round(rounds);
    nan_report.set_epsilon_spent(std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(p0.Report(nan_report).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    v1::PrivacyReport report = nan_report;
    report.set_epsilon_spent(0);
    report.set_finished(true);
    report.set_test_mse(1.0);
    report.set_test_count(0);
    ASSERT_THAT(p0.Report(report), IsOk());
    break;
  }
}

// (a) and (b): the transport refuses clients the federation CA did not certify.
TEST_F(SecurityTest, ClientsWithoutAFederationCertificateCannotCompleteAnyRpc) {
  auto plan = PlanJob(SyntheticHflFlags(10), "mtls", 60, 1);
  ASSERT_THAT(plan, IsOk());
  ASSERT_NO_FATAL_FAILURE(StartCluster(OptionsFor(*plan), {}));
  const int port = cluster_->server_port();
  const std::string ca_pem = ReadFile(cluster_->cert_dir() + "/ca.crt");
  ASSERT_FALSE(ca_pem.empty());

  // Control: the same code path with party-0's real certificate works.
  net::TlsConfig party0{false, cluster_->cert_dir(), "party-0"};
  auto good = net::MakeChannel(absl::StrCat("127.0.0.1:", port), party0, "server");
  ASSERT_THAT(good, IsOk());
  EXPECT_EQ(RegisterCode(*good, "party-0"), grpc::StatusCode::OK);
  grpc::SslCredentialsOptions real;
  real.pem_root_certs = ca_pem;
  real.pem_cert_chain = ReadFile(cluster_->cert_dir() + "/party-1.crt");
  real.pem_private_key = ReadFile(cluster_->cert_dir() + "/party-1.key");
  EXPECT_EQ(RegisterCode(ChannelWith(port, real), "party-1"), grpc::StatusCode::OK);

  // (a) TLS that trusts the federation CA but presents no certificate.
  grpc::SslCredentialsOptions anonymous;
  anonymous.pem_root_certs = ca_pem;
  auto none = ChannelWith(port, anonymous);
  EXPECT_EQ(RegisterCode(none, "party-0"), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(GetJobCode(none, "mtls"), grpc::StatusCode::UNAVAILABLE);

  // (b) A well-formed certificate named party-0 (and an operator one) from
  // another CA, while still trusting the federation CA for the server.
  const std::string rogue_ca = (fs::path(cluster_->work_dir()) / "rogue-ca").string();
  const std::string rogue_out = (fs::path(cluster_->work_dir()) / "rogue-certs").string();
  ASSERT_THAT(pki::InitCa(rogue_ca, "rogue", absl::Hours(24)), IsOk());
  ASSERT_TRUE(pki::IssueCertificate(rogue_ca, rogue_out, "party-0", pki::Role::kParty, kSans,
                                    absl::Hours(12))
                  .ok());
  ASSERT_TRUE(pki::IssueCertificate(rogue_ca, rogue_out, "operator", pki::Role::kOperator, kSans,
                                    absl::Hours(12))
                  .ok());
  for (const std::string name : {"party-0", "operator"}) {
    SCOPED_TRACE(name);
    grpc::SslCredentialsOptions rogue;
    rogue.pem_root_certs = ca_pem;
    rogue.pem_cert_chain = ReadFile(rogue_out + "/" + name + ".crt");
    rogue.pem_private_key = ReadFile(rogue_out + "/" + name + ".key");
    ASSERT_FALSE(rogue.pem_cert_chain.empty());
    auto ch = ChannelWith(port, rogue);
    EXPECT_EQ(RegisterCode(ch, "party-0"), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(GetJobCode(ch, "mtls"), grpc::StatusCode::UNAVAILABLE);
    auto op = v1::Operator::NewStub(ch);
    v1::SubmitJobRequest submit;
    *submit.mutable_spec() = plan->spec;
    v1::SubmitJobResponse submitted;
    EXPECT_EQ(op->SubmitJob(Ctx().get(), submit, &submitted).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  // Nothing got through: no job was created, and only party-0 registered.
  auto job = cluster_->GetJob("mtls");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound) << job.status();
  EXPECT_TRUE(cluster_->ServerRunning());
}

// (c), (d), (e) during a running job.
TEST_F(SecurityTest, RosterIdentityAndUploadValidationDuringARunningJob) {
  constexpr int kRounds = 4;
  auto plan = PlanJob(SyntheticHflFlags(kRounds), "guarded", /*round_deadline_seconds=*/300,
                      /*min_parties=*/1);
  ASSERT_THAT(plan, IsOk());
  cluster::ClusterOptions options = OptionsFor(*plan);
  options.liveness_seconds = 60;  // the manual party-0 is never dropped
  ASSERT_NO_FATAL_FAILURE(StartCluster(options, {1, 2}));
  const std::string address = absl::StrCat("127.0.0.1:", cluster_->server_port());
  const std::string& cert_dir = cluster_->cert_dir();

  // A certified party the job's roster does not list.
  ASSERT_TRUE(pki::IssueCertificate(cert_dir, cert_dir, "party-9", pki::Role::kParty, kSans,
                                    absl::Hours(12))
                  .ok());
  auto ch0 = net::MakeChannel(address, net::TlsConfig{false, cert_dir, "party-0"}, "server");
  auto ch9 = net::MakeChannel(address, net::TlsConfig{false, cert_dir, "party-9"}, "server");
  ASSERT_TRUE(ch0.ok() && ch9.ok());
  ManualParty p0(*ch0, "party-0");
  ManualParty p9(*ch9, "party-9");
  ASSERT_THAT(p0.Register(), IsOk());
  ASSERT_TRUE(p9.Register().ok());  // any certified party may connect ...

  auto id = cluster_->SubmitJob(plan->spec);
  ASSERT_THAT(id, IsOk());

  // party-0 accepts with the sizes fedmf-party would send for this split.
  auto offer = p0.NextTask(absl::Seconds(30));
  ASSERT_THAT(offer, IsOk());
  ASSERT_EQ(offer->kind(), v1::TASK_KIND_OFFER);
  ASSERT_EQ(offer->job_id(), *id);
  const data::PartyData& mine = plan->federation.parties[0];
  v1::OfferReply accept;
  accept.set_party("party-0");
  accept.set_job_id(*id);
  accept.set_accept(true);
  accept.set_users(mine.num_users());
  accept.set_items(mine.num_items());
  accept.set_global_users(static_cast<int32_t>(plan->dataset.user_ids.size()));
  accept.set_global_items(static_cast<int32_t>(plan->dataset.item_ids.size()));
  {
    // (d) party-0's certificate answering for party-1.
    v1::OfferReply forged = accept;
    forged.set_party("party-1");
    EXPECT_EQ(p0.ReplyOffer(forged).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  ASSERT_THAT(p0.ReplyOffer(accept), IsOk());

  auto task = p0.NextTask(absl::Seconds(60));
  ASSERT_THAT(task, IsOk());
  ASSERT_EQ(task->kind(), v1::TASK_KIND_ROUND);
  ASSERT_EQ(task->round(), 0);
  auto running = cluster_->GetJob(*id);
  ASSERT_THAT(running, IsOk());
  ASSERT_EQ(running->state(), v1::JOB_STATE_RUNNING);

  mf::Matrix shared;
  ASSERT_THAT(p0.Download("party-0", *id, 0, &shared), IsOk());
  ASSERT_EQ(shared.rows(), static_cast<int>(plan->dataset.item_ids.size()));  // HFL: V is m x p
  ASSERT_EQ(shared.cols(), plan->config.dim);
  GuardedJob job{*id, accept, shared, p0.max_chunk_values(), address, cert_dir};
  auto encode = [&](const mf::Matrix& m) { return job.Encode(m); };

  ASSERT_NO_FATAL_FAILURE(ExpectOutsiderRefused(p9, *ch9, job));
  ExpectImpersonationRefused(p0, job);
  for (const UploadCase& c : MalformedUploads(job)) {
    SCOPED_TRACE(c.what);
    v1::UploadResponse resp;
    grpc::Status s = p0.Upload(c.chunks, &resp);
    EXPECT_EQ(s.error_code(), c.want) << s.error_message();
    EXPECT_NE(s.error_message().find(c.names), std::string::npos)
        << "the error should name " << c.names << ": " << s.error_message();
    EXPECT_FALSE(resp.accepted());
    ASSERT_TRUE(cluster_->ServerRunning()) << "the server died on " << c.what;
    auto st = cluster_->GetJob(*id);
    ASSERT_THAT(st, IsOk());
    EXPECT_EQ(st->state(), v1::JOB_STATE_RUNNING);
    EXPECT_EQ(st->round(), 0) << "a rejected upload closed the round";
  }

  // A valid upload (the shared matrix itself satisfies the clipping
  // invariant) is accepted after all that; a second one is not. Its report
  // (NaN epsilon) is refused without undoing the update: the party is told
  // to send it by itself.
  {
    std::vector<v1::MatrixChunk> chunks = encode(shared);
    v1::PrivacyReport* nan_report = chunks.front().mutable_report();
    nan_report->set_party("party-0");
    nan_report->set_job_id(*id);
    nan_report->set_round(0);
    nan_report->set_epsilon_spent(std::numeric_limits<double>::quiet_NaN());
    v1::UploadResponse resp;
    grpc::Status s = p0.Upload(chunks, &resp);
    ASSERT_THAT(s, IsOk()) << s.error_message();
    EXPECT_TRUE(resp.accepted());
    EXPECT_FALSE(resp.report_taken());
    EXPECT_EQ(resp.round(), 0);
    EXPECT_FALSE(resp.has_next_task()) << "not asked for (await_next_task unset)";
    v1::UploadResponse again;
    const grpc::StatusCode code = p0.Upload(encode(shared), &again).error_code();
    // ALREADY_EXISTS while round 0 is open; FAILED_PRECONDITION if it closed.
    EXPECT_TRUE(code == grpc::StatusCode::ALREADY_EXISTS ||
                code == grpc::StatusCode::FAILED_PRECONDITION)
        << code;
  }

  ASSERT_NO_FATAL_FAILURE(PlayToFinish(p0, job, kRounds));

  auto st = cluster_->WaitJob(*id, absl::Minutes(2));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  ASSERT_EQ(st->rounds_size(), kRounds);
  for (const v1::RoundRecord& r : st->rounds()) {
    EXPECT_EQ(r.contributors_size(), 3) << "round " << r.round();
    if (r.round() == 0) continue;  // its report was the refused NaN one
    // PlayToFinish's report on the upload is in the round's history.
    int found = 0;
    for (const v1::PartyRoundReport& rep : r.reports()) {
      if (rep.party() != "party-0") continue;
      ++found;
      EXPECT_EQ(rep.ledger_epsilon(), 0.25 * (r.round() + 1)) << "round " << r.round();
    }
    EXPECT_EQ(found, 1) << "round " << r.round();
  }
  // The forged report for party-1 changed nothing.
  const v1::PartyStatus* p1 = FindParty(*st, "party-1");
  ASSERT_NE(p1, nullptr);
  EXPECT_LE(p1->epsilon_spent(), 1.0 + 1e-9);
  EXPECT_GT(p1->test_count(), 0);
  EXPECT_TRUE(cluster_->ServerRunning());
  const std::string log = cluster_->ServerLog();
  EXPECT_NE(log.find("'party-0' tried to speak for 'party-1'"), std::string::npos);
}

}  // namespace
}  // namespace fedmf::it
