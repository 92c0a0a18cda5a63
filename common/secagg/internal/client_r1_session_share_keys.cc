#include "common/secagg/internal/client_r1_session_share_keys.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/aes_gcm.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/x25519.h"
#include "common/secagg/internal/client_phase_support.h"
#include "common/secagg/internal/client_r2_masked_input.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/session.h"
#include "common/secagg/share_bundle.h"

namespace fedmf::secagg::internal {

using crypto::SecretBytes;
using crypto::X25519PublicKey;

absl::StatusOr<ClientTransition> ShareInSession(ClientContext& ctx,
                                                const std::vector<DeviceId>& live) {
  const ClientSession& session = *ctx.session;
  const size_t t = static_cast<size_t>(ctx.config.threshold);
  if (live.size() + 1 < t) {
    return absl::FailedPreconditionError(
        absl::StrCat("only ", live.size(), " live neighbours; need ", t - 1, " to share secrets"));
  }
  const uint64_t agg = ctx.config.aggregation_id;
  SecretBytes b(kSecretBytes), e(kSecretBytes);
  ctx.rng.FillBytes(b.data(), b.size());
  ctx.rng.FillBytes(e.data(), e.size());
  ASSIGN_OR_RETURN(std::unique_ptr<HolderShares> split,
                   SplitAmongHolders(ctx, live, e.span(), b.span()));

  ShareKeys out;
  out.header = ctx.Header(Phase::kShareKeys);
  ASSIGN_OR_RETURN(out.b_commitment, CommitSelfMaskSeed(b.span(), agg, ctx.self));
  ASSIGN_OR_RETURN(out.recovery_commitment, CommitRecoveryKey(e.span(), agg, ctx.self));
  out.shares.reserve(live.size());
  out.mask_pads.reserve(live.size());
  std::vector<Peer> peers;
  peers.reserve(live.size());
  for (size_t p = 0; p < split->holders.size(); ++p) {
    if (p == split->self_pos) continue;
    const ClientSession::Peer& peer = *session.FindPeer(split->holders[p]);  // caller checked
    const SecretBytes plain =
        EncodeShareBundle(ShareBundle{ctx.self, peer.id, split->dropout[p], split->b[p]});
    ASSIGN_OR_RETURN(std::vector<uint8_t> sealed,
                     crypto::AesGcmSeal(peer.send_key.span(), plain.span(),
                                        ShareBundleAad(agg, ctx.self, peer.id), ctx.rng));
    out.shares.push_back({peer.id, std::move(sealed)});
    ASSIGN_OR_RETURN(SecretBytes seed,
                     DeriveRoundMaskSeed(peer.mask_key.span(), agg, ctx.self, peer.id));
    ASSIGN_OR_RETURN(SecretBytes pad, DeriveRecoveryPad(e.span(), agg, ctx.self, peer.id));
    const SecretBytes hidden = XorSecret(seed.span(), pad.span());
    out.mask_pads.push_back(
        {peer.id, std::vector<uint8_t>(hidden.span().begin(), hidden.span().end())});
    peers.push_back({peer.id, X25519PublicKey{}, peer.receive_key, std::move(seed)});
  }
  // e dies here: only its shares and pads leave, and nothing later needs it.
  return ClientTransition{
      MakeMaskedInputPhase(std::nullopt, std::move(b), std::move(peers), split->b[split->self_pos]),
      ClientMessage(std::move(out))};
}

namespace {

// A session round after the setup: the broadcast names the live neighbours
// and carries no keys (the session's are used).
class SessionShareKeysPhase final : public ClientPhase {
 public:
  ClientState state() const override { return ClientState::kR1ShareKeys; }

  absl::StatusOr<ClientTransition> Handle(ClientContext& ctx,
                                          const ServerMessage& message) override {
    const auto* broadcast = std::get_if<KeysBroadcast>(&message);
    if (broadcast == nullptr) return Unexpected(message, state());
    if (broadcast->neighbours.size() > ctx.session->peers().size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "key broadcast lists ", broadcast->neighbours.size(), " devices; this device has ",
          ctx.session->peers().size(), " session neighbours"));
    }
    std::vector<DeviceId> live;
    live.reserve(broadcast->neighbours.size());
    for (const NeighbourKeys& nk : broadcast->neighbours) {
      if (!nk.c_pk.empty() || !nk.s_pk.empty() || !nk.signing_key.empty() ||
          !nk.credential.empty() || !nk.signature.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("key broadcast of a session round carries keys for ", nk.device,
                         " (the session's keys are fixed at its setup)"));
      }
      if (ctx.session->FindPeer(nk.device) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("key broadcast includes ", nk.device,
                         ", which did not complete the session's setup with this device"));
      }
      live.push_back(nk.device);
    }
    ASSIGN_OR_RETURN(live, SortedUnique(std::move(live), "key broadcast"));
    return ShareInSession(ctx, live);
  }
};

}  // namespace

std::unique_ptr<ClientPhase> MakeSessionShareKeysPhase() {
  return std::make_unique<SessionShareKeysPhase>();
}

}  // namespace fedmf::secagg::internal
