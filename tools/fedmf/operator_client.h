// What every operator command against a running daemon shares (fedmf job
// ..., recommend, export-model, ledger): its flags, the mutual-TLS channel,
// the call deadline, and how a failed call is reported.
#ifndef FEDMF_TOOLS_FEDMF_OPERATOR_CLIENT_H_
#define FEDMF_TOOLS_FEDMF_OPERATOR_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/pki/role.h"
#include "grpcpp/grpcpp.h"

namespace fedmf::cli {

struct ClientArgs {
  std::string server;
  std::string party;
  std::string peer_name;
  std::string cert_dir = "certs";
  std::string name = "operator";
  bool insecure = false;
  std::string spec_path;
  std::string job_id;
  std::string user;
  int32_t top = 10;
  bool json = false;
  bool include_rated = false;
  std::string model_dir;        // recommend --model: offline, from a saved model
  std::string model_party;      // recommend --model-party: which party of it
  std::string out_dir;          // export-model --out
  double interval_seconds = 1;  // job watch --interval
};

// --cert-dir, --name, --insecure on `cmd`.
void AddTlsFlags(CLI::App* cmd, ClientArgs* a);

// Every operator call: the server answers from memory or its store.
constexpr absl::Duration kOperatorCallTimeout = absl::Seconds(30);

// A channel to `addr`, whose certificate must name `peer_name` in `role`.
absl::StatusOr<std::shared_ptr<grpc::Channel>> Dial(const ClientArgs& a, const std::string& addr,
                                                    const std::string& peer_name, pki::Role role);

// A failed RPC to `addr`: the error, and when the connection itself failed,
// its TLS cause (wrong peer name, another CA, an expired or refused
// certificate) found with a plain handshake — gRPC alone says only
// "failed to connect" or "Deadline Exceeded". Returns the exit code (cli::Report).
int FailRpc(const std::string& what, const absl::Status& s, const ClientArgs& a,
            const std::string& addr, const std::string& peer_name, pki::Role role);
int FailRpc(const std::string& what, const grpc::Status& rpc, const ClientArgs& a,
            const std::string& addr, const std::string& peer_name, pki::Role role);

// --server-name, or "server".
std::string ServerPeer(const ClientArgs& a);

// Text the server relays from peers (errors that quote refusals, names,
// ids), printed with control characters escaped: a party's refusal once
// erased the operator's lines, printed a fake "finished" and wrote the
// clipboard (OSC 52). JSON output gets the same, so that it is valid UTF-8.
std::string Shown(const std::string& s);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_OPERATOR_CLIENT_H_
