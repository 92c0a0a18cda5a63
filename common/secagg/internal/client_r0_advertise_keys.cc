#include <utility>
#include <vector>

#include "common/base/status_macros.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/x25519.h"
#include "common/secagg/internal/client_phase_support.h"
#include "common/secagg/internal/client_phases.h"
#include "common/secagg/internal/client_r1_session_share_keys.h"
#include "common/secagg/internal/client_r1_share_keys.h"
#include "common/secagg/session.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg::internal {
namespace {

using crypto::X25519PrivateKey;

class AdvertiseKeysPhase final : public ClientPhase {
 public:
  ClientState state() const override { return ClientState::kR0AdvertiseKeys; }

  absl::StatusOr<ClientTransition> Start(ClientContext& ctx) override {
    if (ctx.session != nullptr && ctx.session->established()) return CheckIn(ctx);
    ASSIGN_OR_RETURN(X25519PrivateKey c_sk, X25519PrivateKey::Generate(ctx.rng));
    ASSIGN_OR_RETURN(X25519PrivateKey s_sk, X25519PrivateKey::Generate(ctx.rng));
    AdvertiseKeys out;
    out.header = ctx.Header(Phase::kAdvertiseKeys);
    out.c_pk.assign(c_sk.public_key().begin(), c_sk.public_key().end());
    out.s_pk.assign(s_sk.public_key().begin(), s_sk.public_key().end());
    if (ctx.signing.has_value()) {
      const crypto::Ed25519PublicKey& vk = ctx.signing->key.public_key();
      out.signing_key.assign(vk.begin(), vk.end());
      out.credential = ctx.signing->credential;
      absl::StatusOr<std::vector<uint8_t>> sig = ctx.signing->key.Sign(AdvertisementStatement(
          ctx.config.aggregation_id, ctx.self, out.c_pk, out.s_pk, out.signing_key));
      if (!sig.ok()) return sig.status();
      out.signature = std::move(*sig);
    }
    return ClientTransition{MakeShareKeysPhase(std::move(c_sk), std::move(s_sk)),
                            ClientMessage(std::move(out))};
  }

  // A session round after the setup: a check-in with no keys.
  static absl::StatusOr<ClientTransition> CheckIn(ClientContext& ctx) {
    AdvertiseKeys out;
    out.header = ctx.Header(Phase::kAdvertiseKeys);
    return ClientTransition{MakeSessionShareKeysPhase(), ClientMessage(std::move(out))};
  }

  absl::StatusOr<ClientTransition> Handle(ClientContext&, const ServerMessage& message) override {
    return Unexpected(message, state());
  }
};

}  // namespace

std::unique_ptr<ClientPhase> MakeClientInitialPhase() {
  return std::make_unique<AdvertiseKeysPhase>();
}

}  // namespace fedmf::secagg::internal
