#include "tools/cluster/hua_cluster.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "common/pki/ca.h"
#include "tools/cluster/local_cluster.h"

namespace fedmf::cluster {
namespace fs = std::filesystem;

absl::Status IssueHuaCertificates(const std::string& cert_dir, int hosts) {
  if (hosts <= 0) return absl::OkStatus();
  const std::vector<std::string> sans{"localhost", "127.0.0.1"};
  if (auto s = pki::IssueCertificate(cert_dir, cert_dir, "aggregator", pki::Role::kAggregator, sans,
                                     absl::Hours(24 * 7));
      !s.ok()) {
    return s;
  }
  for (int k = 0; k < hosts; ++k) {
    if (auto s = pki::IssueCertificate(cert_dir, cert_dir, LocalCluster::HuaHostName(k),
                                       pki::Role::kDevice, sans, absl::Hours(24 * 7));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

std::string LocalCluster::HuaHostName(int k) { return absl::StrCat("hua-host-", k); }

absl::Status LocalCluster::StartAggregator() {
  const std::string port_file = (fs::path(work_dir_) / "aggregator.port").string();
  std::error_code ec;
  fs::remove(port_file, ec);
  std::vector<std::string> argv{(fs::path(options_.bin_dir) / "fedmf-aggregator").string(),
                                "--listen",
                                "127.0.0.1:0",
                                "--port-file",
                                port_file,
                                "--cert-dir",
                                cert_dir_,
                                "--name",
                                "aggregator"};
  if (options_.insecure) argv.push_back("--insecure");
  if (options_.aggregator_record) argv.push_back("--record-for-tests");
  ASSIGN_OR_RETURN(auto p, ChildProcess::Spawn(
                               argv, (fs::path(work_dir_) / "logs" / "aggregator.log").string()));
  aggregator_.emplace(std::move(p));
  ASSIGN_OR_RETURN(auto port, WaitForPortFile(port_file, absl::Seconds(30), &*aggregator_));
  aggregator_port_ = port;
  return absl::OkStatus();
}

absl::Status LocalCluster::StartHuaHost(int k, const std::string& data_spec, int first, int count,
                                        int drop_at_iteration,
                                        const std::vector<std::string>& extra_flags) {
  if (server_port_ == 0 || aggregator_port_ == 0) {
    return absl::FailedPreconditionError("start the server and the aggregator first");
  }
  std::vector<std::string> argv{
      (fs::path(options_.bin_dir) / "fedmf-device").string(), "--setting", "hua-s3", "--name",
      HuaHostName(k), "--server", absl::StrCat("127.0.0.1:", server_port_), "--aggregator",
      absl::StrCat("127.0.0.1:", aggregator_port_), "--cert-dir", cert_dir_, "--devices-from",
      data_spec, "--first", std::to_string(first), "--count", std::to_string(count),
      // The host's privacy ledger, in the cluster's own directory.
      "--ledger", (fs::path(work_dir_) / absl::StrCat(HuaHostName(k), ".ledger.db")).string()};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  if (drop_at_iteration > 0) {
    argv.push_back("--hua-drop-at-iteration");
    argv.push_back(std::to_string(drop_at_iteration));
  }
  if (options_.insecure) argv.push_back("--insecure");
  auto p = ChildProcess::Spawn(
      argv, (fs::path(work_dir_) / "logs" / absl::StrCat(HuaHostName(k), ".log")).string());
  if (!p.ok()) return p.status();
  hua_hosts_.erase(k);
  hua_hosts_.emplace(k, std::move(*p));
  return absl::OkStatus();
}

bool LocalCluster::HuaHostRunning(int k) {
  auto it = hua_hosts_.find(k);
  return it != hua_hosts_.end() && it->second.running();
}

absl::StatusOr<v1::HuaRecordedResponse> LocalCluster::AggregatorRecorded(
    const std::string& job_id) {
  ASSIGN_OR_RETURN(auto ch, Channel(aggregator_port_, "aggregator"));
  auto stub = v1::HuaAggregator::NewStub(ch);
  v1::HuaRecordedRequest req;
  req.set_job_id(job_id);
  v1::HuaRecordedResponse resp;
  auto ctx = net::DeadlineContext(absl::Seconds(30));
  RETURN_IF_ERROR(net::FromGrpc(stub->Recorded(ctx.get(), req, &resp)));
  return resp;
}

}  // namespace fedmf::cluster
