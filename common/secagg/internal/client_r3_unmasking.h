// Internal to common/secagg: the client's last phase (Bonawitz et al. round 3,
// "Unmasking"): reveal, for each neighbour it masked with, the b-share of a
// survivor or the s_sk-share of a dropped device, never both.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R3_UNMASKING_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R3_UNMASKING_H_

#include <memory>
#include <optional>
#include <vector>

#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/secagg/internal/client_phase_support.h"
#include "common/secagg/internal/client_phases.h"

namespace fedmf::secagg::internal {

// `held`: the neighbours' shares, sorted by owner. `signed_u3`: the survivor
// set this device signed in the consistency check (signing clients only).
std::unique_ptr<ClientPhase> MakeUnmaskingPhase(
    std::vector<HeldShares> held, crypto::ShamirShare own_b_share,
    std::optional<std::vector<DeviceId>> signed_u3 = std::nullopt);

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R3_UNMASKING_H_
