#include "server/server_config.h"

#include <arpa/inet.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/config/yaml_reader.h"
#include "common/metrics/host_port.h"

namespace fedmf::server {
namespace {

absl::Status Seconds(config::YamlMap& m, const std::string& key, absl::Duration* out) {
  double s = absl::ToDoubleSeconds(*out);
  RETURN_IF_ERROR(m.GetDouble(key, &s));
  if (!(s > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(m.Where(key), "key '", key, "': must be > 0"));
  }
  *out = absl::Seconds(s);
  return absl::OkStatus();
}

absl::Status Pool(config::YamlMap& m, const std::string& key, CallPool* pool) {
  RETURN_IF_ERROR(m.GetInt(key, &pool->calls));
  RETURN_IF_ERROR(m.GetInt(key + "_per_peer", &pool->calls_per_peer));
  if (pool->calls < 1 || pool->calls_per_peer < 1 || pool->calls_per_peer > pool->calls) {
    return absl::InvalidArgumentError(
        absl::StrCat(m.Where(key), "keys 'calls.", key, "' and 'calls.", key,
                     "_per_peer': need 1 <= per_peer <= ", key, " (got ", pool->calls, " and ",
                     pool->calls_per_peer, ")"));
  }
  return absl::OkStatus();
}

absl::Status Calls(config::YamlMap& root, ServerConfig* c) {
  if (!root.Has("calls")) return absl::OkStatus();
  ASSIGN_OR_RETURN(auto m, root.GetMap("calls"));
  CallLimits& l = c->calls;
  RETURN_IF_ERROR(Pool(m, "operators", &l.operators));
  RETURN_IF_ERROR(Pool(m, "parties", &l.parties));
  RETURN_IF_ERROR(Pool(m, "device_hosts", &l.device_hosts));
  RETURN_IF_ERROR(Pool(m, "others", &l.others));
  RETURN_IF_ERROR(Seconds(m, "idle_seconds", &l.idle));
  RETURN_IF_ERROR(Seconds(m, "max_seconds", &l.max));
  return m.Finish();
}

absl::StatusOr<ServerConfig> FromMap(config::YamlMap root) {
  ServerConfig c;
  config::FirstError check;
  check(root.GetString("listen", &c.listen));
  check(root.GetString("port_file", &c.port_file));
  check(root.GetString("database", &c.database));
  check(root.GetInt("max_chunk_values", &c.max_chunk_values));
  check(root.GetString("log_format", &c.log_format));
  check(root.GetString("metrics_listen", &c.metrics_listen));
  check(root.GetString("metrics_port_file", &c.metrics_port_file));
  check(root.GetString("dashboard_listen", &c.dashboard_listen));
  check(root.GetString("dashboard_port_file", &c.dashboard_port_file));
  check(root.GetBool("dashboard_allow_remote", &c.dashboard_allow_remote));
  check(root.GetStringList("dashboard_hosts", &c.dashboard_hosts));
  check(root.GetString("dashboard_token_file", &c.dashboard_token_file));
  check(root.GetStringList("admin_operators", &c.admin_operators));
  check(root.GetStringList("allowed_parties", &c.coordinator.allowed_parties));
  check(root.GetInt("max_threads", &c.max_threads));
  check(root.GetInt("max_concurrent_polls", &c.max_concurrent_polls));
  check(Seconds(root, "poll_seconds", &c.coordinator.poll));
  check(Seconds(root, "liveness_seconds", &c.coordinator.liveness));
  check(Seconds(root, "offer_deadline_seconds", &c.coordinator.offer_deadline));
  check(Seconds(root, "finish_deadline_seconds", &c.coordinator.finish_deadline));
  check(Seconds(root, "round_deadline_seconds", &c.coordinator.default_round_deadline));
  check(Calls(root, &c));
  if (root.Has("seed")) {
    int64_t seed = -1;
    check(root.GetInt("seed", &seed));
    if (check.status().ok() && seed < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(root.Where("seed"), "key 'seed': must be >= 0 (omit it for OS entropy)"));
    }
    c.coordinator.seed = static_cast<uint64_t>(seed);
  }
  if (root.Has("tls")) {
    ASSIGN_OR_RETURN(auto tls, root.GetMap("tls"));
    check(tls.GetBool("insecure", &c.tls.insecure));
    check(tls.GetString("cert_dir", &c.tls.cert_dir));
    check(tls.GetString("name", &c.tls.name));
    check(tls.Finish());
  }
  if (root.Has("limits")) {
    ASSIGN_OR_RETURN(auto limits, root.GetMap("limits"));
    SizeLimits& l = c.coordinator.limits;
    check(limits.GetInt("max_users", &l.max_users));
    check(limits.GetInt("max_items", &l.max_items));
    check(limits.GetInt("max_dim", &l.max_dim));
    check(limits.GetInt("max_devices", &l.max_devices));
    check(limits.GetInt("max_parties", &l.max_parties));
    check(limits.GetInt("max_matrix_values", &l.max_matrix_values));
    check(limits.GetInt("upload_buffer_bytes", &l.upload_buffer_bytes));
    check(limits.GetInt("psi_mailbox_bytes", &l.psi_mailbox_bytes));
    check(limits.GetInt("psi_fetch_bytes", &l.psi_fetch_bytes));
    check(limits.GetInt("max_text_bytes", &l.max_text_bytes));
    check(limits.GetInt("max_rejections_per_response", &l.max_rejections_per_response));
    check(limits.GetInt("rejection_log_lines_per_minute", &l.rejection_log_lines_per_minute));
    check(limits.Finish());
    if (check.status().ok()) {
      if (auto st = ValidateSizeLimits(l); !st.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(root.Where("limits"), st.message()));
      }
    }
  }
  RETURN_IF_ERROR(check.status());
  RETURN_IF_ERROR(root.Finish());
  if (c.max_threads < 8) {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where("max_threads"), "key 'max_threads': must be >= 8"));
  }
  // Calls refused over a quota still need a thread for a moment: keep some.
  constexpr int32_t kSpareThreads = 16;
  if (c.calls.total_calls() > c.max_threads - kSpareThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        root.Where("calls"), "keys 'calls.*': the pools add up to ", c.calls.total_calls(),
        " calls, more than max_threads - ", kSpareThreads, " = ", c.max_threads - kSpareThreads,
        ": lower them or raise max_threads, so that no role can take another's threads"));
  }
  const absl::Duration longest_wait =
      std::max(c.coordinator.poll, absl::Seconds(10));  // GetJob waits at most 10 s
  if (c.calls.idle < 2 * longest_wait) {
    return absl::InvalidArgumentError(absl::StrCat(
        root.Where("calls"), "key 'calls.idle_seconds': ", absl::ToDoubleSeconds(c.calls.idle),
        " s would cut off an honest long poll; use at least twice max(poll_seconds, 10) = ",
        absl::ToDoubleSeconds(2 * longest_wait)));
  }
  if (c.calls.max < c.calls.idle) {
    return absl::InvalidArgumentError(absl::StrCat(
        root.Where("calls"), "key 'calls.max_seconds': must be >= calls.idle_seconds"));
  }
  if (c.coordinator.limits.psi_fetch_bytes > (6 << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where("limits"),
                     "key 'limits.psi_fetch_bytes': at most 6291456 (6 MiB), so that an "
                     "answer stays below gRPC's 8 MiB message bound"));
  }
  if (c.max_concurrent_polls < 1 || c.max_concurrent_polls >= c.max_threads) {
    return absl::InvalidArgumentError(absl::StrCat(
        root.Where("max_concurrent_polls"),
        "key 'max_concurrent_polls': must be in [1, max_threads - 1] so that uploads and "
        "replies always find a thread"));
  }
  if (c.max_chunk_values < 1024 || c.max_chunk_values > (1 << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(
        root.Where("max_chunk_values"), "key 'max_chunk_values': must be in [1024, 1048576]"));
  }
  if (c.log_format != "text" && c.log_format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where("log_format"), "key 'log_format': use text or json"));
  }
  if (!c.dashboard_listen.empty()) {
    if (auto st = CheckDashboardListen(c.dashboard_listen, c.dashboard_allow_remote); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(root.Where("dashboard_listen"), st.message()));
    }
    auto host_port = metrics::SplitHostPort("dashboard", c.dashboard_listen);
    if (host_port.ok() && !IsLoopbackHost(host_port->first) && c.dashboard_token_file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          root.Where("dashboard_listen"),
          "key 'dashboard_token_file': required when "
          "dashboard_listen is not a loopback address (",
          c.dashboard_listen,
          "): anyone who reaches the port would read the jobs; write a random token to a file "
          "(e.g. openssl rand -hex 32 > dashboard.token) and name it here"));
    }
  }
  if (c.database.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where("database"), "key 'database': required"));
  }
  return c;
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  std::string bare = host;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  unsigned char v4[4];
  if (inet_pton(AF_INET, bare.c_str(), v4) == 1) return v4[0] == 127;
  unsigned char v6[16];
  if (inet_pton(AF_INET6, bare.c_str(), v6) == 1) {
    static constexpr unsigned char kLoopback6[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                     0, 0, 0, 0, 0, 0, 0, 1};
    return std::equal(v6, v6 + 16, kLoopback6);
  }
  return false;
}

absl::Status CheckDashboardListen(const std::string& listen, bool allow_remote) {
  ASSIGN_OR_RETURN(auto host_port, metrics::SplitHostPort("dashboard", listen));
  const std::string& host = host_port.first;
  if (allow_remote || IsLoopbackHost(host)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "key 'dashboard_listen': '", listen,
      "' is not a loopback address; the dashboard is plain HTTP, so serve it on 127.0.0.1:PORT "
      "and reach it through an SSH tunnel or a TLS proxy, or set dashboard_allow_remote: true"));
}

absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromFile(path));
  return FromMap(std::move(root));
}

absl::StatusOr<ServerConfig> ParseServerConfig(const std::string& text, const std::string& name) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromString(text, name));
  return FromMap(std::move(root));
}

}  // namespace fedmf::server
