// Internal to common/secagg: the client's round 1 (Bonawitz et al.,
// "ShareKeys"): check the neighbours' keys the server relays (distinct,
// certified and signed against an active server, enough holders for the
// threshold), split s_sk and b among the holders and seal each holder's
// shares to it. In a session's setup round, also establish the session.
#ifndef FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R1_SHARE_KEYS_H_
#define FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R1_SHARE_KEYS_H_

#include <memory>

#include "common/crypto/x25519.h"
#include "common/secagg/internal/client_phases.h"

namespace fedmf::secagg::internal {

// `c_sk`, `s_sk`: the key pairs advertised in round 0.
std::unique_ptr<ClientPhase> MakeShareKeysPhase(crypto::X25519PrivateKey c_sk,
                                                crypto::X25519PrivateKey s_sk);

}  // namespace fedmf::secagg::internal

#endif  // FEDMF_COMMON_SECAGG_INTERNAL_CLIENT_R1_SHARE_KEYS_H_
