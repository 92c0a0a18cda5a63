#include "tools/cluster/lfl_cluster.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/pki/ca.h"
#include "tools/cluster/local_cluster.h"

namespace fedmf::cluster {
namespace fs = std::filesystem;

absl::Status IssueLflCertificates(const std::string& cert_dir, int hosts) {
  const std::vector<std::string> sans{"localhost", "127.0.0.1"};
  for (int k = 0; k < hosts; ++k) {
    if (auto s = pki::IssueCertificate(cert_dir, cert_dir, LocalCluster::LflHostName(k),
                                       pki::Role::kDevice, sans, absl::Hours(24 * 7));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

std::string LocalCluster::LflHostName(int k) { return absl::StrCat("device-host-", k); }

std::vector<std::string> DemoDevicePolicyFlags(double whole_job_epsilon, int64_t iterations) {
  std::vector<std::string> f{"--report-metrics", "--max-iterations",
                             std::to_string(std::max<int64_t>(iterations, 1))};
  if (std::isinf(whole_job_epsilon)) {
    f.push_back("--allow-non-private");
  } else if (whole_job_epsilon > 8) {
    f.push_back("--max-epsilon");
    f.push_back(absl::StrCat(whole_job_epsilon));
  }
  return f;
}

absl::Status LocalCluster::StartLflHost(int k, const LflHostArgs& a) {
  ASSIGN_OR_RETURN(auto server, DialServer());
  // A misbehaving host is the test build of fedmf-device (tests/integration/
  // misbehaving_device.h); the production binary has no such flag.
  const std::string binary = a.misbehave.empty() ? "fedmf-device" : "fedmf-device-misbehaving";
  std::vector<std::string> argv{
      (fs::path(options_.bin_dir) / binary).string(),
      "--setting",
      "lfl",
      "--name",
      LflHostName(k),
      "--server",
      server,
      "--cert-dir",
      cert_dir_,
      "--devices-from",
      a.data_spec,
      "--first",
      std::to_string(a.first),
      "--count",
      std::to_string(a.count),
      "--dropout",
      a.dropout,
      "--threads",
      std::to_string(a.threads),
      "--ledger",
      (fs::path(work_dir_) / absl::StrCat(LflHostName(k), ".ledger.db")).string()};
  if (a.seed >= 0) {
    argv.push_back("--seed");
    argv.push_back(std::to_string(a.seed));
  }
  argv.insert(argv.end(), a.policy_flags.begin(), a.policy_flags.end());
  if (!a.misbehave.empty()) {
    argv.push_back("--misbehave");
    argv.push_back(a.misbehave);
  }
  if (options_.insecure) argv.push_back("--insecure");
  auto p = ChildProcess::Spawn(
      argv, (fs::path(work_dir_) / "logs" / absl::StrCat(LflHostName(k), ".log")).string());
  if (!p.ok()) return p.status();
  lfl_hosts_.erase(k);
  lfl_hosts_.emplace(k, std::move(*p));
  return absl::OkStatus();
}

bool LocalCluster::LflHostRunning(int k) {
  auto it = lfl_hosts_.find(k);
  return it != lfl_hosts_.end() && it->second.running();
}

std::string LocalCluster::LflHostLog(int k) const {
  std::ifstream in(fs::path(work_dir_) / "logs" / absl::StrCat(LflHostName(k), ".log"));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace fedmf::cluster
