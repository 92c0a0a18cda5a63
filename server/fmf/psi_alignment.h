// The server's part in an align_users (VFL) job's private set intersection:
// the relay of common/psi behind the PsiSend / PsiFetch RPCs. Holds the
// ring, the session the parties sign for, their certificates (relayed so
// each can check the others' signatures), and what each party has already
// been handed. No lock of its own: JobCoordinator holds its mutex around
// every call. It never sees an id; it logs sizes only.
#ifndef FEDMF_SERVER_FMF_PSI_ALIGNMENT_H_
#define FEDMF_SERVER_FMF_PSI_ALIGNMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/psi/relay.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::server {

// The most points one message may carry under the 8 MiB gRPC message bound
// (32 bytes each, room left for the framing): the largest user set a party
// can align today.
inline constexpr int64_t kMaxPsiSetSize = ((8 << 20) - 4096) / 32;
// A party's certificate relayed to the others (a PEM certificate is ~1-2 KB).
inline constexpr size_t kMaxPsiCertificateBytes = 16 * 1024;

class PsiAlignment {
 public:
  // `ring` = the parties in ring order (the job's roster); `session` binds
  // every signature to this run. At most `mailbox_bytes` of lists wait at
  // the server at once (limits.psi_mailbox_bytes); one Fetch answer carries
  // about `fetch_bytes` (limits.psi_fetch_bytes; a single list or the
  // intersection goes alone if larger) and says `more` when it left some.
  static absl::StatusOr<PsiAlignment> Create(std::vector<std::string> ring, std::string session,
                                             int64_t mailbox_bytes = int64_t{512} << 20,
                                             int64_t fetch_bytes = int64_t{4} << 20);

  const std::string& session() const { return session_; }
  const std::vector<std::string>& ring() const { return ring_; }
  // The ring index of `party`, or NotFound.
  absl::StatusOr<int32_t> IndexOf(const std::string& party) const;

  // One message of party `index` (already authenticated as that party).
  absl::Status Send(int32_t index, const v1::PsiSendRequest& request);
  // What is new for party `index`; empty when nothing is.
  v1::PsiFetchResponse Fetch(int32_t index);
  static bool Empty(const v1::PsiFetchResponse& r) {
    return r.certificate_pem_size() == 0 && r.lists_size() == 0 && !r.has_intersection() &&
           r.confirmations_size() == 0 && r.error().empty();
  }

  // The intersection's size once the tags are in (logged; the server learns
  // it, docs/privacy.md, psi).
  std::optional<int64_t> intersection_size() const;
  std::vector<int64_t> set_sizes() const;

 private:
  PsiAlignment(std::vector<std::string> ring, std::string session, psi::PsiRelay relay,
               int64_t fetch_bytes);

  std::vector<std::string> ring_;
  std::string session_;
  psi::PsiRelay relay_;
  int64_t fetch_bytes_;
  std::vector<std::optional<std::string>> certificates_;
  std::vector<bool> sent_certificates_, sent_intersection_, sent_confirmations_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_FMF_PSI_ALIGNMENT_H_
