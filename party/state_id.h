// The identity of a party's state directory: a random id written once to
// STATE_DIR/party.id and sent with every registration. With the state lock
// (state_dir_lock.h: one process per directory) it lets the server tell a
// restart of the same party (same id: take over) from a second process
// under the same certificate name with another ledger (another id: refused
// while the first is live), which would spend the party's budget twice.
#ifndef FEDMF_PARTY_STATE_ID_H_
#define FEDMF_PARTY_STATE_ID_H_

#include <string>

#include "absl/status/statusor.h"

namespace fedmf::party {

// Reads STATE_DIR/party.id, creating it (32 hex digits from the OS CSPRNG)
// on first use. A file that is not 32 hex digits is an error naming it.
absl::StatusOr<std::string> LoadOrCreateStateId(const std::string& state_dir);

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_STATE_ID_H_
