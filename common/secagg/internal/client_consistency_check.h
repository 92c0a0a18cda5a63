// Internal to common/secagg: signing clients only, between masking and
// unmasking (Bonawitz et al. round 3, "ConsistencyCheck"): sign the survivor
// set U3 the server announces, once, after checking it against what this
// device saw.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_CONSISTENCY_CHECK_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_CONSISTENCY_CHECK_H_

#include <memory>
#include <optional>
#include <vector>

#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/secagg/internal/client_phase_support.h"
#include "common/secagg/internal/client_phases.h"

namespace fedmf::secagg::internal {

// `held`: the neighbours' shares, sorted by owner.
std::unique_ptr<ClientPhase> MakeConsistencyCheckPhase(std::vector<HeldShares> held,
                                                       crypto::ShamirShare own_b_share);

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_CONSISTENCY_CHECK_H_
