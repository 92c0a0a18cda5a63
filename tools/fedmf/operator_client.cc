#include "tools/fedmf/operator_client.h"

#include <iostream>

#include "common/base/peer_text.h"
#include "common/cli/command_line.h"
#include "common/net/credentials.h"
#include "common/net/tls_diagnosis.h"

namespace fedmf::cli {

void AddTlsFlags(CLI::App* cmd, ClientArgs* a) {
  cmd->add_option("--cert-dir", a->cert_dir, "directory with ca.crt and NAME.crt/.key")
      ->capture_default_str();
  cmd->add_option("--name", a->name, "this operator's certificate name")->capture_default_str();
  cmd->add_flag("--insecure", a->insecure, "plaintext (only against --insecure daemons)");
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> Dial(const ClientArgs& a, const std::string& addr,
                                                    const std::string& peer_name, pki::Role role) {
  return net::MakeChannel(addr, net::TlsConfig{a.insecure, a.cert_dir, a.name},
                          net::ExpectedPeer{peer_name, role});
}

int FailRpc(const std::string& what, const absl::Status& s, const ClientArgs& a,
            const std::string& addr, const std::string& peer_name, pki::Role role) {
  const int code = Report("fedmf " + what, s);
  const std::string cause = net::DiagnoseRpcFailure(
      s, addr, net::TlsConfig{a.insecure, a.cert_dir, a.name},
      net::ExpectedPeer{peer_name, role,
                        role == pki::Role::kServer ? "--server-name" : "--party-name"},
      absl::Seconds(5));
  if (!cause.empty()) std::cerr << "fedmf " << what << ": cause: " << cause << "\n";
  return code;
}

int FailRpc(const std::string& what, const grpc::Status& rpc, const ClientArgs& a,
            const std::string& addr, const std::string& peer_name, pki::Role role) {
  return FailRpc(what, net::FromGrpc(rpc), a, addr, peer_name, role);
}

std::string ServerPeer(const ClientArgs& a) { return a.peer_name.empty() ? "server" : a.peer_name; }

std::string Shown(const std::string& s) { return base::EscapePeerText(s, 8192); }

}  // namespace fedmf::cli
