// A party's side of an align_users job's private set intersection, over the
// server (TASK_KIND_ALIGN; the protocol is common/psi/party.h). Every message
// is signed with the party's certificate key, and the other parties'
// signatures are checked against their certificates: the federation CA, the
// party role, and the roster name at their ring position. So the server,
// which relays everything, can neither inject lists of its own nor pose as a
// party. (With --insecure there are no certificates: nothing is signed and
// the server is trusted; a warning says so.)
#ifndef FEDMF_PARTY_PSI_CLIENT_H_
#define FEDMF_PARTY_PSI_CLIENT_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/pki/tls_files.h"
#include "fedmf/v1/federation.grpc.pb.h"

namespace fedmf::party {

struct PsiClientOptions {
  std::string party;  // this party's name (its certificate's)
  std::string job_id;
  std::string session;              // Task.psi_session
  int32_t index = 0;                // Task.psi_index
  std::vector<std::string> ring;    // Task.psi_ring, checked against the roster
  std::vector<std::string> roster;  // the job's roster, as offered
  absl::Duration deadline = absl::Minutes(10);
  int threads = 1;
  // Certificates and key; nullopt = --insecure (unsigned, trusting the server).
  std::optional<pki::TlsFiles> tls;
  // psi::PartyOptions::max_list_ratio (the party's policy.max_partner_list_ratio).
  double max_list_ratio = 0;
};

// Runs the PSI to the end. Returns this party's shared user ids in the
// canonical order (the same rows at every party); `own_ids` are the
// distinct user ids of its own file. The ids never leave this process.
// `partner_sizes`, if given, receives each other party's list size by name
// as far as the run got (also when it fails), for the party's records.
absl::StatusOr<std::vector<std::string>> RunPsiClient(
    v1::Coordinator::StubInterface* stub, const PsiClientOptions& options,
    std::vector<std::string> own_ids, std::map<std::string, int64_t>* partner_sizes = nullptr);

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_PSI_CLIENT_H_
