// Internal to common/secagg: round 1 of an aggregation that runs in an
// established session (session.h): no key agreement, fresh b and e shared
// under the session's channel keys, round mask seeds sent hidden under e.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R1_SESSION_SHARE_KEYS_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R1_SESSION_SHARE_KEYS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/secagg/internal/client_phases.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg::internal {

// The sharing step of a session round (session.h): fresh b and e shared among
// {self} ∪ live, sealed under the session's channel keys; every live
// neighbour's round seed m_ij^r is derived here and sent hidden under
// HKDF(e, j). `live`: sorted ids, each a session peer.
// Also the end of a session's setup round (client_r1_share_keys.cc).
absl::StatusOr<ClientTransition> ShareInSession(ClientContext& ctx,
                                                const std::vector<DeviceId>& live);

// A session round after the setup: the broadcast names the live neighbours
// and carries no keys (the session's are used).
std::unique_ptr<ClientPhase> MakeSessionShareKeysPhase();

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R1_SESSION_SHARE_KEYS_H_
