#include "tools/cluster/local_cluster.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "common/pki/ca.h"
#include "tools/cluster/exit_cleanup.h"
#include "tools/cluster/hua_cluster.h"
#include "tools/cluster/lfl_cluster.h"

namespace fedmf::cluster {
namespace fs = std::filesystem;

std::string LocalCluster::PartyName(int k) { return absl::StrCat("party-", k); }

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Create(ClusterOptions options) {
  std::unique_ptr<LocalCluster> c(new LocalCluster(std::move(options)));
  RETURN_IF_ERROR(c->Prepare());
  return c;
}

absl::Status LocalCluster::Prepare() {
  if (options_.bin_dir.empty()) options_.bin_dir = SelfDirectory();
  // An interrupt (Ctrl-C on fedmf demo) removes the work directory once it
  // is written, not while the CA is being written into it.
  DeferInterrupt defer;
  if (options_.work_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "fedmf-cluster-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return absl::UnavailableError("mkdtemp failed");
    work_dir_ = tmpl;
    owns_work_dir_ = !options_.keep_work_dir;
    if (owns_work_dir_) RemoveOnInterrupt(work_dir_);
  } else {
    work_dir_ = options_.work_dir;
    fs::create_directories(work_dir_);
  }
  fs::create_directories(fs::path(work_dir_) / "logs");
  cert_dir_ = (fs::path(work_dir_) / "certs").string();
  if (!options_.insecure) {
    RETURN_IF_ERROR(pki::InitCa(cert_dir_, "fedmf-local", absl::Hours(24 * 30)));
    const std::vector<std::string> sans{"localhost", "127.0.0.1"};
    if (auto s = pki::IssueCertificate(cert_dir_, cert_dir_, "server", pki::Role::kServer, sans,
                                       absl::Hours(24 * 7));
        !s.ok()) {
      return s;
    }
    if (auto s = pki::IssueCertificate(cert_dir_, cert_dir_, "operator", pki::Role::kOperator, sans,
                                       absl::Hours(24 * 7));
        !s.ok()) {
      return s;
    }
    for (int k = 0; k < options_.parties; ++k) {
      if (auto s = pki::IssueCertificate(cert_dir_, cert_dir_, PartyName(k), pki::Role::kParty,
                                         sans, absl::Hours(24 * 7));
          !s.ok()) {
        return s;
      }
    }
    RETURN_IF_ERROR(IssueHuaCertificates(cert_dir_, options_.hua_hosts));
    RETURN_IF_ERROR(IssueLflCertificates(cert_dir_, options_.lfl_hosts));
  }
  RETURN_IF_ERROR(WriteServerConfig("127.0.0.1:0"));
  for (int k = 0; k < options_.parties; ++k) {
    RETURN_IF_ERROR(WritePartyConfig(k));
  }
  return absl::OkStatus();
}

absl::Status LocalCluster::WriteServerConfig(const std::string& listen) {
  std::ofstream server_yaml(fs::path(work_dir_) / "server.yaml", std::ios::trunc);
  server_yaml << "listen: " << listen << "\n"
              << "port_file: " << (fs::path(work_dir_) / "server.port").string() << "\n"
              << "database: " << (fs::path(work_dir_) / "server.db").string() << "\n"
              << "poll_seconds: " << options_.poll_seconds << "\n"
              << "liveness_seconds: " << options_.liveness_seconds << "\n"
              << "offer_deadline_seconds: 60\n"
              << (options_.seed ? absl::StrCat("seed: ", *options_.seed, "\n") : "")
              << "tls:\n  insecure: " << (options_.insecure ? "true" : "false") << "\n"
              << "  cert_dir: " << cert_dir_ << "\n  name: server\n"
              << options_.server_extra_yaml;
  if (options_.metrics) {
    server_yaml << "metrics_listen: 127.0.0.1:0\n"
                << "metrics_port_file: " << (fs::path(work_dir_) / "server.metrics.port").string()
                << "\n";
  }
  if (options_.dashboard) {
    server_yaml << "dashboard_listen: 127.0.0.1:0\n"
                << "dashboard_port_file: "
                << (fs::path(work_dir_) / "server.dashboard.port").string() << "\n";
  }
  if (!server_yaml) return absl::UnavailableError("cannot write server.yaml");
  return absl::OkStatus();
}

absl::Status LocalCluster::WritePartyConfig(int k) {
  PartyOptions p;
  if (auto it = options_.party_overrides.find(k); it != options_.party_overrides.end()) {
    p = it->second;
  }
  const std::string data = p.data_spec.empty() ? options_.data_spec : p.data_spec;
  std::ofstream y(fs::path(work_dir_) / absl::StrCat(PartyName(k), ".yaml"));
  y << "name: " << PartyName(k) << "\n"
    << "server: 127.0.0.1:0\n"  // replaced by --server when started
    << "server_name: " << p.server_name << "\n"
    << "state_dir: " << (fs::path(work_dir_) / PartyName(k)).string() << "\n"
    << "admin_listen: 127.0.0.1:0\n"
    << "admin_operators: [operator]\n"
    << "admin_port_file: " << AdminPortFile(k) << "\n"
    << "tls:\n  insecure: " << (options_.insecure ? "true" : "false") << "\n"
    << "  cert_dir: " << cert_dir_ << "\n"
    << "data:\n  spec: \"" << data << "\"\n  setting: " << options_.role
    << "\n  parties: " << (p.own_file ? 1 : options_.parties)
    << "\n  index: " << (p.own_file ? 0 : k) << "\n  seed: " << options_.split_seed
    << "\n  test_fraction: " << options_.test_fraction << "\n  vfl_split: " << options_.vfl_split
    << "\n  rating_min: " << options_.rating_min << "\n  rating_max: " << options_.rating_max
    << "\n"
    << (p.catalogue.empty() ? "" : absl::StrCat("  catalogue: \"", p.catalogue, "\"\n"))
    << (options_.seed ? absl::StrCat("noise_seed: ", *options_.seed, "\n") : "")
    << "local_threads: " << options_.local_threads << "\n"
    << "policy:\n  max_epsilon: " << p.max_epsilon << "\n  delta: 1e-5\n"
    << "  allowed_settings: [" << absl::StrJoin(p.allowed_settings, ", ") << "]\n"
    << "  min_granularity: " << p.min_granularity << "\n"
    << "  allow_non_private: " << (p.allow_non_private ? "true" : "false") << "\n"
    << "  report_metrics: " << (p.report_metrics ? "true" : "false") << "\n"
    << "  max_alignments_per_day: " << p.max_alignments_per_day << "\n"
    << "  max_partner_list_ratio: " << p.max_partner_list_ratio << "\n";
  std::vector<std::string> partners;
  if (p.allowed_partners.has_value()) {
    partners = *p.allowed_partners;
  } else {
    for (int j = 0; j < options_.parties; ++j) {
      if (j != k) partners.push_back(PartyName(j));
    }
  }
  y << "  allowed_partners: [" << absl::StrJoin(partners, ", ") << "]\n";
  if (!y) return absl::UnavailableError("cannot write a party config");
  return absl::OkStatus();
}

LocalCluster::~LocalCluster() {
  StopAll();
  if (owns_work_dir_) RemoveNowAndForget(work_dir_);
}

void LocalCluster::StopAll() {
  // Every client of the server at once (SIGTERM to all, then one shared
  // 3 s grace), the server last.
  std::vector<ChildProcess*> clients;
  for (auto& [k, p] : hua_hosts_) clients.push_back(&p);
  for (auto& [k, p] : lfl_hosts_) clients.push_back(&p);
  if (aggregator_.has_value()) clients.push_back(&*aggregator_);
  for (auto& [k, p] : parties_) clients.push_back(&p);
  for (ChildProcess* p : clients) p->RequestStop();
  const absl::Time deadline = absl::Now() + absl::Seconds(3);
  for (ChildProcess* p : clients) p->WaitStopped(deadline);
  hua_hosts_.clear();
  lfl_hosts_.clear();
  aggregator_.reset();
  parties_.clear();
  if (server_.has_value()) server_->Stop(absl::Seconds(3));
  server_.reset();
}

absl::Status LocalCluster::StartServer() {
  const std::string port_file = (fs::path(work_dir_) / "server.port").string();
  const std::string metrics_port_file = (fs::path(work_dir_) / "server.metrics.port").string();
  std::error_code ec;
  fs::remove(port_file, ec);
  fs::remove(metrics_port_file, ec);
  const std::string dashboard_port_file = (fs::path(work_dir_) / "server.dashboard.port").string();
  fs::remove(dashboard_port_file, ec);
  std::vector<std::string> argv{(fs::path(options_.bin_dir) / "fedmf-server").string(), "--config",
                                (fs::path(work_dir_) / "server.yaml").string()};
  ASSIGN_OR_RETURN(
      auto p, ChildProcess::Spawn(argv, (fs::path(work_dir_) / "logs" / "server.log").string()));
  server_.emplace(std::move(p));
  ASSIGN_OR_RETURN(auto port, WaitForPortFile(port_file, absl::Seconds(30), &*server_));
  server_port_ = port;
  if (options_.metrics) {
    ASSIGN_OR_RETURN(auto metrics_port,
                     WaitForPortFile(metrics_port_file, absl::Seconds(30), &*server_));
    server_metrics_port_ = metrics_port;
  }
  if (options_.dashboard) {
    ASSIGN_OR_RETURN(auto dashboard_port,
                     WaitForPortFile(dashboard_port_file, absl::Seconds(30), &*server_));
    server_dashboard_port_ = dashboard_port;
  }
  return absl::OkStatus();
}

void LocalCluster::KillServer() {
  if (server_.has_value()) server_->Kill();
  server_.reset();
}

absl::Status LocalCluster::RestartServer() {
  if (server_port_ == 0) return absl::FailedPreconditionError("start the server first");
  const int port = server_port_;
  KillServer();
  RETURN_IF_ERROR(WriteServerConfig(absl::StrCat("127.0.0.1:", port)));
  // The killed process's listening socket is gone once it is reaped, but a
  // bind can still lose a race for the port; retry a few times, bounded.
  absl::Status last;
  for (int attempt = 0; attempt < 10; ++attempt) {
    last = StartServer();
    if (last.ok()) {
      if (server_port_ != port) {
        return absl::InternalError(
            absl::StrCat("the server came back on port ", server_port_, ", not ", port));
      }
      return absl::OkStatus();
    }
    KillServer();
    std::this_thread::sleep_for(std::chrono::milliseconds(100 * (attempt + 1)));  // retry delay
  }
  server_port_ = port;  // keep the address the parties were given
  return last;
}

bool LocalCluster::ServerRunning() { return server_.has_value() && server_->running(); }

bool LocalCluster::PartyRunning(int k) {
  auto it = parties_.find(k);
  return it != parties_.end() && it->second.running();
}

absl::StatusOr<std::string> LocalCluster::DialServer() const {
  if (!options_.dial_server.empty()) return options_.dial_server;
  if (server_port_ == 0) return absl::FailedPreconditionError("start the server first");
  return absl::StrCat("127.0.0.1:", server_port_);
}

absl::Status LocalCluster::StartParty(int k) { return StartParties({k}); }

absl::Status LocalCluster::StartParties(const std::vector<int>& ks) {
  // All spawned first, then each waited for: a party's start-up (loading its
  // data, its first TLS handshake) overlaps the others' instead of adding up.
  RETURN_IF_ERROR(SpawnParties(ks));
  return AwaitParties(ks);
}

std::string LocalCluster::AdminPortFile(int k) const {
  return (fs::path(work_dir_) / absl::StrCat(PartyName(k), ".admin.port")).string();
}

absl::Status LocalCluster::SpawnParties(const std::vector<int>& ks) {
  auto dial = DialServer();
  for (int k : ks) {
    absl::StatusOr<std::string> server = dial;
    if (const auto own = options_.party_dial_server.find(k);
        own != options_.party_dial_server.end()) {
      server = own->second;
    }
    if (!server.ok()) return server.status();
    std::error_code ec;
    fs::remove(AdminPortFile(k), ec);
    std::vector<std::string> argv{
        (fs::path(options_.bin_dir) / "fedmf-party").string(), "--config",
        (fs::path(work_dir_) / absl::StrCat(PartyName(k), ".yaml")).string(), "--server", *server};
    auto p = ChildProcess::Spawn(
        argv, (fs::path(work_dir_) / "logs" / absl::StrCat(PartyName(k), ".log")).string());
    if (!p.ok()) {
      return absl::Status(p.status().code(),
                          absl::StrCat(PartyName(k), ": ", p.status().message()));
    }
    parties_.erase(k);
    parties_.emplace(k, std::move(*p));
  }
  return absl::OkStatus();
}

absl::Status LocalCluster::AwaitParties(const std::vector<int>& ks) {
  for (int k : ks) {
    auto it = parties_.find(k);
    if (it == parties_.end()) {
      return absl::FailedPreconditionError(absl::StrCat(PartyName(k), ": not spawned"));
    }
    auto port = WaitForPortFile(AdminPortFile(k), absl::Seconds(30), &it->second);
    if (!port.ok()) {
      return absl::Status(port.status().code(),
                          absl::StrCat(PartyName(k), ": ", port.status().message()));
    }
    admin_ports_[k] = *port;
  }
  return absl::OkStatus();
}

void LocalCluster::KillParty(int k) {
  auto it = parties_.find(k);
  if (it != parties_.end()) {
    it->second.Kill();
    parties_.erase(it);
  }
}

pid_t LocalCluster::PartyPid(int k) const {
  auto it = parties_.find(k);
  return it == parties_.end() ? -1 : it->second.pid();
}

pid_t LocalCluster::ServerPid() const { return server_.has_value() ? server_->pid() : -1; }

int LocalCluster::admin_port(int k) const {
  auto it = admin_ports_.find(k);
  return it == admin_ports_.end() ? 0 : it->second;
}

std::string LocalCluster::ServerLog() const {
  std::ifstream in(fs::path(work_dir_) / "logs" / "server.log");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> LocalCluster::Channel(int port,
                                                                     const std::string& cert_name) {
  net::TlsConfig tls{options_.insecure, cert_dir_, "operator"};
  // The peer's role follows from the certificate names this cluster issues.
  pki::Role role = pki::Role::kParty;
  if (cert_name == "server") role = pki::Role::kServer;
  if (cert_name == "aggregator") role = pki::Role::kAggregator;
  return net::MakeChannel(absl::StrCat("127.0.0.1:", port), tls,
                          net::ExpectedPeer{cert_name, role});
}

absl::StatusOr<std::string> LocalCluster::SubmitJob(v1::JobSpec spec) {
  ASSIGN_OR_RETURN(auto ch, Channel(server_port_, "server"));
  auto stub = v1::Operator::NewStub(ch);
  v1::SubmitJobRequest req;
  *req.mutable_spec() = std::move(spec);
  v1::SubmitJobResponse resp;
  // A flood of other callers can fill the server's threads for a moment.
  grpc::Status s = net::RetryThreadQuotaRefusals([&] {
    auto ctx = net::DeadlineContext(absl::Seconds(30));
    return stub->SubmitJob(ctx.get(), req, &resp);
  });
  if (!s.ok()) return net::FromGrpc(s);
  return resp.job_id();
}

absl::StatusOr<v1::JobStatus> LocalCluster::GetJob(const std::string& job_id) {
  ASSIGN_OR_RETURN(auto ch, Channel(server_port_, "server"));
  v1::GetJobRequest req;
  req.set_job_id(job_id);
  return GetJobWith(*v1::Operator::NewStub(ch), req);
}

absl::StatusOr<v1::JobStatus> LocalCluster::GetJobWith(v1::Operator::Stub& stub,
                                                       const v1::GetJobRequest& req) {
  v1::JobStatus resp;
  auto ctx = net::DeadlineContext(absl::Seconds(10 + req.wait_seconds()));
  grpc::Status s = stub.GetJob(ctx.get(), req, &resp);
  if (!s.ok()) return net::FromGrpc(s);
  return resp;
}

absl::StatusOr<v1::JobStatus> LocalCluster::WaitJob(
    const std::string& job_id, absl::Duration timeout,
    const std::function<void(const v1::JobStatus&)>& on_status, bool each_round) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last = absl::OkStatus();
  // One connection while the server answers (a TLS handshake per look cost
  // more than the look); a fresh one after an error, as the server may have
  // been restarted and a failed channel waits out its reconnect backoff.
  std::unique_ptr<v1::Operator::Stub> stub;
  std::optional<v1::JobStatus> seen;  // the last answer
  // Without the server's long poll (an answer at once without news), a look
  // costs the server a status with the whole history (thousands of reports
  // in a long job): the pause is at least 20 looks' time, so that looking
  // takes at most ~5% of what the server does.
  absl::Duration period = absl::Milliseconds(50);
  while (absl::Now() < deadline) {
    if (stub == nullptr) {
      auto ch = Channel(server_port_, "server");
      if (ch.ok())
        stub = v1::Operator::NewStub(*ch);
      else
        last = ch.status();
    }
    if (stub != nullptr) {
      v1::GetJobRequest req;
      req.set_job_id(job_id);
      absl::Duration wait = absl::ZeroDuration();
      if (seen.has_value()) {
        // The job's end (fedmf demo's wall time) is seen when it happens.
        wait = std::clamp(deadline - absl::Now(), absl::ZeroDuration(), absl::Seconds(5));
        req.set_wait_seconds(absl::ToDoubleSeconds(wait));
        req.set_known_state(seen->state());
        req.set_known_rounds(each_round ? seen->rounds_completed() : -1);
      }
      const absl::Time asked = absl::Now();
      auto st = GetJobWith(*stub, req);
      const absl::Duration took = absl::Now() - asked;
      if (st.ok()) {
        if (on_status) on_status(*st);
        if (st->state() == v1::JOB_STATE_FINISHED || st->state() == v1::JOB_STATE_FAILED) {
          return st;
        }
        const bool news = !seen.has_value() || st->state() != seen->state() ||
                          (each_round && st->rounds_completed() != seen->rounds_completed());
        seen = *std::move(st);
        // The server waited (news, or most of the wait): ask again at once.
        if (wait > absl::ZeroDuration() && (news || took >= wait / 2)) continue;
        period = std::clamp(20 * took, absl::Milliseconds(50), absl::Seconds(1));
      } else {
        last = st.status();  // the server may be restarting
        stub.reset();
      }
    }
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(period));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "job '", job_id, "' did not finish within ", absl::FormatDuration(timeout),
      last.ok() ? std::string(" (it was still running: give it longer, e.g. fedmf demo --timeout)")
                : absl::StrCat("; last error: ", last.message())));
}

absl::StatusOr<v1::LedgerResponse> LocalCluster::PartyLedger(int k) {
  ASSIGN_OR_RETURN(auto ch, Channel(admin_port(k), PartyName(k)));
  auto stub = v1::PartyAdmin::NewStub(ch);
  v1::LedgerResponse resp;
  auto ctx = net::DeadlineContext(absl::Seconds(10));
  grpc::Status s = stub->Ledger(ctx.get(), v1::LedgerRequest(), &resp);
  if (!s.ok()) return net::FromGrpc(s);
  return resp;
}

absl::StatusOr<v1::RecommendResponse> LocalCluster::Recommend(int k, const std::string& user,
                                                              int top, bool include_rated) {
  ASSIGN_OR_RETURN(auto ch, Channel(admin_port(k), PartyName(k)));
  auto stub = v1::PartyAdmin::NewStub(ch);
  v1::RecommendRequest req;
  req.set_user(user);
  req.set_top(top);
  req.set_include_rated(include_rated);
  v1::RecommendResponse resp;
  auto ctx = net::DeadlineContext(absl::Seconds(10));
  grpc::Status s = stub->Recommend(ctx.get(), req, &resp);
  if (!s.ok()) return net::FromGrpc(s);
  return resp;
}

}  // namespace fedmf::cluster
