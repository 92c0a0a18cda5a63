// The multi-party PSI run with every party and the relay in one process (the
// `fedmf train --party-data` VFL path, tests and the benchmark): the same
// state machines the daemons drive, with fresh Ed25519 keys per party.
#ifndef FEDMF_COMMON_PSI_IN_PROCESS_H_
#define FEDMF_COMMON_PSI_IN_PROCESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/random/csprng.h"

namespace fedmf::psi {

struct PsiTraffic {
  int64_t bytes_sent = 0;      // by this party to the relay
  int64_t bytes_received = 0;  // by this party from the relay
  double seconds = 0;          // this party's own computation
};

struct PsiRun {
  // Per party: its shared ids in the canonical order (the same users in the
  // same order at every party).
  std::vector<std::vector<std::string>> shared_ids;
  std::vector<PsiTraffic> parties;
  int64_t relay_bytes_in = 0;   // = the parties' bytes_sent
  int64_t relay_bytes_out = 0;  // = the parties' bytes_received
  double relay_seconds = 0;
  int64_t intersection_size = 0;
};

// ids[p] = party p's distinct ids. Keys, blinds and shuffles come from
// `rng` forked per party.
absl::StatusOr<PsiRun> RunPsiInProcess(const std::vector<std::vector<std::string>>& ids,
                                       const std::string& session, random::Csprng& rng,
                                       int threads = 1);

}  // namespace fedmf::psi

#endif  // FEDMF_COMMON_PSI_IN_PROCESS_H_
