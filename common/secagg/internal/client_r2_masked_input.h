// Internal to common/secagg: the client's masking phase (Bonawitz et al.
// round 2, "MaskedInputCollection"): open the share bundles relayed by the
// server (their senders are U2 as this device sees it) and send
// y = x + PRG(b) ± PRG(s_ij) over exactly those senders.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R2_MASKED_INPUT_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R2_MASKED_INPUT_H_

#include <memory>
#include <optional>
#include <vector>

#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/secagg/internal/client_phase_support.h"
#include "common/secagg/internal/client_phases.h"

namespace fedmf::secagg::internal {

// `s_sk` for a per-aggregation run; nullopt in a session round, whose
// `peers` carry their round seeds. `peers`: sorted by id.
std::unique_ptr<ClientPhase> MakeMaskedInputPhase(std::optional<crypto::X25519PrivateKey> s_sk,
                                                  crypto::SecretBytes b, std::vector<Peer> peers,
                                                  crypto::ShamirShare own_b_share);

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R2_MASKED_INPUT_H_
