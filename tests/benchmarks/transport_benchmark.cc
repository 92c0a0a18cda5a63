// What one party-round costs the transport alone: the HFL demo's exchange
// (fedmf-party's UploadUpdate of its 1682 x 20 float32 release, answered with
// the next task and the round's shared matrix inlined, as the server's
// hand-over does) between parties and a server over loopback, with the
// daemons' mTLS credentials or without TLS; the parties are threads of this
// process or (but one) processes of their own (transport_party). Nothing else
// runs: no DP work, no store. The CPU per exchange (both ends, every gRPC
// thread; getrusage) is the floor of what the demo's ten parties and server
// spend per party-round on the network (docs/benchmarks.md, issue #18's demo
// goal).
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/net/credentials.h"
#include "common/pki/ca.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "tests/benchmarks/transport_exchange.h"
#include "tests/testing/temp_dir.h"
#include "tools/cluster/process.h"

namespace {

namespace v1 = fedmf::v1;
namespace net = fedmf::net;

using fedmf::bench::Exchange;
using fedmf::bench::kCols;
using fedmf::bench::ProcessCpuSeconds;

// What the server answers an upload with: the next task, carrying the
// round's shared matrix encoded once (the server's EncodedMatrixCache).
class HandOver {
 public:
  explicit HandOver(int rows)
      : next_(net::EncodeMatrix(fedmf::mf::Matrix::Constant(rows, kCols, 0.125), "job", 1,
                                net::kDefaultMaxChunkValues)) {}
  void Fill(v1::UploadResponse* response) const {
    response->set_accepted(true);
    v1::Task* task = response->mutable_next_task();
    task->set_kind(v1::TASK_KIND_ROUND);
    task->set_job_id("job");
    task->set_round(1);
    for (const v1::MatrixChunk& c : next_) *task->add_shared() = c;
  }

 private:
  const std::vector<v1::MatrixChunk> next_;
};

// gRPC's synchronous API, as fedmf-server: a handler thread per upload reads
// it (reassembly, SHA-256 and finiteness checks) and waits until the round's
// last upload has arrived, as the server's hand-over does.
class SyncService final : public v1::Coordinator::Service {
 public:
  SyncService(int parties, int rows) : parties_(parties), rows_(rows), hand_over_(rows) {}

  grpc::Status UploadUpdate(grpc::ServerContext* /*ctx*/,
                            grpc::ServerReader<v1::MatrixChunk>* reader,
                            v1::UploadResponse* response) override {
    net::MatrixAssembler assembler("job", 0, rows_, kCols, net::kDefaultMaxChunkValues);
    v1::MatrixChunk chunk;
    while (reader->Read(&chunk)) {
      if (!assembler.Add(chunk).ok()) return {grpc::StatusCode::INVALID_ARGUMENT, "chunk"};
    }
    if (!assembler.Finish().ok()) return {grpc::StatusCode::INVALID_ARGUMENT, "matrix"};
    {
      absl::MutexLock lock(&mu_);
      RoundWait wait{&round_, round_};
      if (++arrived_ == parties_) {
        arrived_ = 0;
        ++round_;
      } else if (!mu_.AwaitWithTimeout(absl::Condition(&RoundWait::Closed, &wait),
                                       absl::Seconds(60))) {
        // A party (process) died: fail the round instead of hanging.
        return {grpc::StatusCode::DEADLINE_EXCEEDED, "the round's other uploads did not arrive"};
      }
    }
    hand_over_.Fill(response);
    return grpc::Status::OK;
  }

 private:
  struct RoundWait {
    static bool Closed(RoundWait* w) { return *w->round != w->seen; }
    const int64_t* round;
    int64_t seen;
  };

  const int parties_;
  const int rows_;
  const HandOver hand_over_;
  absl::Mutex mu_;
  int arrived_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t round_ ABSL_GUARDED_BY(mu_) = 0;
};

// gRPC's callback API: no thread per call; a finished upload is parked and
// the round's last one answers them all (what a callback-based fedmf-server
// would do).
class CallbackService final : public v1::Coordinator::CallbackService {
 public:
  CallbackService(int parties, int rows) : parties_(parties), rows_(rows), hand_over_(rows) {}

  grpc::ServerReadReactor<v1::MatrixChunk>* UploadUpdate(grpc::CallbackServerContext* /*ctx*/,
                                                         v1::UploadResponse* response) override {
    return new Upload(this, response);
  }

 private:
  class Upload final : public grpc::ServerReadReactor<v1::MatrixChunk> {
   public:
    Upload(CallbackService* service, v1::UploadResponse* response)
        : service_(service),
          response_(response),
          assembler_("job", 0, service->rows_, kCols, net::kDefaultMaxChunkValues) {
      StartRead(&chunk_);
    }
    void OnReadDone(bool ok) override {
      if (ok) {
        if (!assembler_.Add(chunk_).ok())
          return Finish({grpc::StatusCode::INVALID_ARGUMENT, "chunk"});
        return StartRead(&chunk_);
      }
      if (!assembler_.Finish().ok()) return Finish({grpc::StatusCode::INVALID_ARGUMENT, "matrix"});
      service_->Arrived(this);
    }
    void Answer() {
      service_->hand_over_.Fill(response_);
      Finish(grpc::Status::OK);
    }
    void OnDone() override { delete this; }

   private:
    CallbackService* const service_;
    v1::UploadResponse* const response_;
    net::MatrixAssembler assembler_;
    v1::MatrixChunk chunk_;
  };

  void Arrived(Upload* upload) {
    std::vector<Upload*> round;
    {
      absl::MutexLock lock(&mu_);
      parked_.push_back(upload);
      if (static_cast<int>(parked_.size()) == parties_) round.swap(parked_);
    }
    for (Upload* u : round) u->Answer();
  }

  const int parties_;
  const int rows_;
  const HandOver hand_over_;
  absl::Mutex mu_;
  std::vector<Upload*> parked_ ABSL_GUARDED_BY(mu_);
};

// One CA, a server and a party certificate in a temporary directory, and
// the server listening on an ephemeral loopback port.
class Loopback {
 public:
  // `service` outlives the Loopback.
  Loopback(bool tls, grpc::Service* service) {
    dir_ = tmp_.path();
    const std::vector<std::string> sans = {"localhost", "127.0.0.1"};
    const absl::Duration year = absl::Hours(24 * 365);
    if (!fedmf::pki::InitCa(dir_ + "/ca", "bench", 2 * year).ok() ||
        !fedmf::pki::IssueCertificate(dir_ + "/ca", dir_ + "/server", "server",
                                      fedmf::pki::Role::kServer, sans, year)
             .ok() ||
        !fedmf::pki::IssueCertificate(dir_ + "/ca", dir_ + "/party", "party-a",
                                      fedmf::pki::Role::kParty, sans, year)
             .ok()) {
      std::abort();
    }
    party_tls_ = {.insecure = !tls, .cert_dir = dir_ + "/party", .name = "party-a"};
    auto creds = net::MakeServerCredentials(
        {.insecure = !tls, .cert_dir = dir_ + "/server", .name = "server"});
    if (!creds.ok()) std::abort();
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", *creds, &port);
    builder.RegisterService(service);
    // As fedmf-server (server_main.cc): idle sync-server threads are kept,
    // not created and destroyed for each round's calls.
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 64);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port == 0) std::abort();
    address_ = "127.0.0.1:" + std::to_string(port);
  }
  ~Loopback() {
    server_->Shutdown();  // then tmp_ removes the directory
  }
  const std::string& address() const { return address_; }
  // A directory for the party processes' files, removed with the Loopback.
  const std::string& dir() const { return dir_; }
  // Where a party's certificate is, or "insecure".
  std::string party_cert_dir() const {
    return party_tls_.insecure ? "insecure" : party_tls_.cert_dir;
  }
  // A party's own connection (each fedmf-party has one).
  std::unique_ptr<v1::Coordinator::Stub> NewStub() {
    auto channel = net::MakeChannel(address_, party_tls_);
    if (!channel.ok()) std::abort();
    return v1::Coordinator::NewStub(*channel);
  }

 private:
  fedmf::testing::ScopedTempDir tmp_{"fedmf_transport_"};
  std::string dir_;
  std::string address_;
  net::TlsConfig party_tls_;
  std::unique_ptr<grpc::Server> server_;
};

// A transport_party process (from this benchmark's directory) making
// `rounds` exchanges; Wait() returns the CPU seconds it spent after its
// warm-up exchange, as it wrote them.
class PartyProcess {
 public:
  static PartyProcess Spawn(const Loopback& loopback, int rows, int64_t rounds, int k) {
    const std::string base = loopback.dir() + "/party-" + std::to_string(k);
    auto child = fedmf::cluster::ChildProcess::Spawn(
        {fedmf::cluster::SelfDirectory() + "/transport_party", loopback.address(),
         loopback.party_cert_dir(), std::to_string(rows), std::to_string(rounds), base + ".cpu"},
        base + ".log");
    if (!child.ok()) {
      std::fprintf(stderr, "%s\n", std::string(child.status().message()).c_str());
      std::abort();
    }
    return PartyProcess(std::move(*child), base + ".cpu");
  }
  double Wait() {
    child_.WaitStopped(absl::Now() + absl::Minutes(2));
    if (child_.exit_code() != 0) {
      std::fprintf(stderr, "transport_party failed: see %s\n", child_.log_path().c_str());
      std::abort();
    }
    double seconds = 0;
    std::ifstream(result_) >> seconds;
    return seconds;
  }

 private:
  PartyProcess(fedmf::cluster::ChildProcess child, std::string result)
      : child_(std::move(child)), result_(std::move(result)) {}
  fedmf::cluster::ChildProcess child_;
  std::string result_;
};

// One iteration is one round: range(2) parties (each its own connection)
// upload a range(3) x 20 matrix, the server answers all when the last has
// arrived. range(0): 1 = mTLS, 0 = no TLS; range(1): 1 = callback API
// server, 0 = synchronous (fedmf-server's). rows 1682 is ML-100K's HFL
// shared matrix; rows 1 leaves the cost of a call itself. range(4): 0 = the
// parties are threads of this process, 1 = all but one are processes.
// process_cpu_us is per party-round (this process and the party processes).
void BM_RoundOfUploadsWithHandOver(benchmark::State& state) {
  const int parties = static_cast<int>(state.range(2));
  std::unique_ptr<grpc::Service> service;
  if (state.range(1) == 1) {
    service = std::make_unique<CallbackService>(parties, static_cast<int>(state.range(3)));
  } else {
    service = std::make_unique<SyncService>(parties, static_cast<int>(state.range(3)));
  }
  Loopback loopback(state.range(0) == 1, service.get());
  const int rows = static_cast<int>(state.range(3));
  const fedmf::mf::Matrix release = fedmf::mf::Matrix::Constant(rows, kCols, 0.25);
  // Every party makes one warm-up exchange (the connection and its TLS
  // handshake) and then one per iteration.
  const int64_t rounds = static_cast<int64_t>(state.max_iterations) + 1;
  std::vector<std::thread> others;
  std::vector<PartyProcess> processes;
  for (int k = 1; k < parties; ++k) {
    if (state.range(4) == 1) {
      processes.push_back(PartyProcess::Spawn(loopback, rows, rounds, k));
      continue;
    }
    others.emplace_back([&] {
      auto stub = loopback.NewStub();
      for (int64_t r = 0; r < rounds; ++r) Exchange(*stub, release);
    });
  }
  auto stub = loopback.NewStub();
  Exchange(*stub, release);  // the warm-up round, outside the timing
  double cpu = -ProcessCpuSeconds();
  for (auto _ : state) Exchange(*stub, release);
  cpu += ProcessCpuSeconds();
  for (std::thread& t : others) t.join();
  for (PartyProcess& p : processes) cpu += p.Wait();
  state.counters["process_cpu_us"] =
      benchmark::Counter(cpu * 1e6 / static_cast<double>(state.iterations() * parties));
  state.counters["rounds_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(state.iterations() * parties * 2 * rows * kCols * 4);
}
BENCHMARK(BM_RoundOfUploadsWithHandOver)
    ->ArgNames({"tls", "callback", "parties", "rows", "processes"})
    ->ArgsProduct({{1, 0}, {0, 1}, {1, 10}, {1682, 1}, {0}})
    // Nine of the ten parties as processes of their own (transport_party),
    // as fedmf demo runs them; the server and one party in this process.
    ->Args({1, 0, 10, 1682, 1})
    ->Args({0, 0, 10, 1682, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
