#include "common/secagg/internal/client_r1_share_keys.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/aes_gcm.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/secret_bytes.h"
#include "common/secagg/internal/client_phase_support.h"
#include "common/secagg/internal/client_r1_session_share_keys.h"
#include "common/secagg/internal/client_r2_masked_input.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/session.h"
#include "common/secagg/share_bundle.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg::internal {
namespace {

using crypto::SecretBytes;
using crypto::X25519PrivateKey;
using crypto::X25519PublicKey;

// A neighbour's relayed advertisement: its signing key must be certified for
// it (the caller's PKI) and must have signed exactly these X25519 keys.
struct CertifiedKey {
  crypto::Ed25519PublicKey key;
  std::string host;
};
absl::StatusOr<CertifiedKey> VerifyAdvertisement(const ClientContext& ctx,
                                                 const NeighbourKeys& nk) {
  absl::StatusOr<crypto::Ed25519PublicKey> vk = crypto::ParseEd25519PublicKey(nk.signing_key);
  if (!vk.ok()) {
    return absl::UnauthenticatedError(absl::StrCat("advertisement of device ", nk.device,
                                                   ": bad signing key: ", vk.status().message()));
  }
  absl::StatusOr<std::string> host = ctx.signing->certifier(nk.device, *vk, nk.credential);
  if (!host.ok()) {
    return absl::UnauthenticatedError(absl::StrCat("signing key of device ", nk.device,
                                                   " is not certified: ", host.status().message()));
  }
  if (absl::Status s =
          crypto::Ed25519Verify(*vk,
                                AdvertisementStatement(ctx.config.aggregation_id, nk.device,
                                                       nk.c_pk, nk.s_pk, nk.signing_key),
                                nk.signature);
      !s.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("advertisement of device ", nk.device,
                     " is not signed by its certified key (substituted keys?): ", s.message()));
  }
  return CertifiedKey{*vk, std::move(*host)};
}

class ShareKeysPhase final : public ClientPhase {
 public:
  ShareKeysPhase(X25519PrivateKey c_sk, X25519PrivateKey s_sk)
      : c_sk_(std::move(c_sk)), s_sk_(std::move(s_sk)) {}

  ClientState state() const override { return ClientState::kR1ShareKeys; }

  absl::StatusOr<ClientTransition> Handle(ClientContext& ctx,
                                          const ServerMessage& message) override {
    const auto* broadcast = std::get_if<KeysBroadcast>(&message);
    if (broadcast == nullptr) return Unexpected(message, state());

    if (broadcast->neighbours.size() > ctx.neighbours.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("key broadcast lists ", broadcast->neighbours.size(),
                       " devices; this device has ", ctx.neighbours.size(), " neighbours"));
    }
    std::vector<Announced> announced;
    announced.reserve(broadcast->neighbours.size());
    // All public keys must be distinct, ours included: a server replaying our
    // own key to us (or one device's key under two ids) would otherwise make
    // us derive channel keys or masks it can predict or cancel.
    std::vector<X25519PublicKey> all_keys = {c_sk_.public_key(), s_sk_.public_key()};
    std::map<std::string, size_t> per_host;  // certified neighbours per other host
    for (const NeighbourKeys& nk : broadcast->neighbours) {
      if (!Contains(ctx.neighbours, nk.device)) {
        return absl::InvalidArgumentError(
            absl::StrCat("key broadcast includes ", nk.device, ", which is not a neighbour"));
      }
      ASSIGN_OR_RETURN(X25519PublicKey c_pk, crypto::ParseX25519PublicKey(nk.c_pk));
      ASSIGN_OR_RETURN(X25519PublicKey s_pk, crypto::ParseX25519PublicKey(nk.s_pk));
      if (ctx.signing.has_value()) {
        // Against an active server: these are the keys our shares get sealed
        // to, so they must be the neighbour's own (certified, signed).
        ASSIGN_OR_RETURN(CertifiedKey vk, VerifyAdvertisement(ctx, nk));
        ctx.peer_signing_keys.push_back({nk.device, vk.key});
        if (vk.host != ctx.signing->host &&
            ++per_host[vk.host] >= static_cast<size_t>(ctx.config.threshold)) {
          return absl::FailedPreconditionError(absl::StrCat(
              ">= ", ctx.config.threshold, " (the threshold) of this device's neighbours run on ",
              "host '", vk.host, "': that host and the server could reconstruct its secrets"));
        }
      }
      announced.push_back({nk.device, c_pk, s_pk});
      all_keys.push_back(c_pk);
      all_keys.push_back(s_pk);
    }
    std::sort(announced.begin(), announced.end(),
              [](const Announced& a, const Announced& b) { return a.id < b.id; });
    std::sort(ctx.peer_signing_keys.begin(), ctx.peer_signing_keys.end());
    if (std::adjacent_find(announced.begin(), announced.end(),
                           [](const Announced& a, const Announced& b) { return a.id == b.id; }) !=
        announced.end()) {
      return absl::InvalidArgumentError("key broadcast lists a neighbour twice");
    }
    std::sort(all_keys.begin(), all_keys.end());
    if (std::adjacent_find(all_keys.begin(), all_keys.end()) != all_keys.end()) {
      return absl::InvalidArgumentError("key broadcast contains a repeated public key");
    }
    const size_t t = static_cast<size_t>(ctx.config.threshold);
    // Against an active server: the holders it tells "survived" give b-shares,
    // those it tells "dropped" give s_sk-shares; with 2t > |holders| the two
    // (disjoint) honest groups cannot both reach t, whatever it tells whom.
    // In SecAgg+ this counting, not the neighbour-local consistency check, is
    // what stops equivocation (parameters.h, AdversaryModel::kSemiMalicious).
    if (ctx.signing.has_value() && 2 * t <= announced.size() + 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "threshold ", t, " with ", announced.size() + 1, " holders: against an active server ",
          "2t must exceed the holders (the server must size k and t for an active adversary; "
          "fedmf-server does)"));
    }
    // A host colluding with the server gives both kinds of shares of every
    // device it holds shares of, so the honest holders split by equivocation
    // need only t - c each: 2t must exceed the holders plus the c holders on
    // any one other host (HostCollusionBound, signing.h).
    for (const auto& [host, c] : per_host) {
      if (!HostCollusionBound(t, announced.size() + 1, c)) {
        return absl::FailedPreconditionError(absl::StrCat(
            c, " of this device's ", announced.size() + 1, " share holders run on host '", host,
            "': with threshold ", t, " that host and an equivocating server could collect t ",
            "shares of both of its secrets (need 2t > holders + ", c, ")"));
      }
    }
    if (announced.size() + 1 < t) {
      return absl::FailedPreconditionError(absl::StrCat(
          "only ", announced.size(), " live neighbours; need ", t - 1, " to share secrets"));
    }

    if (ctx.session != nullptr) return EstablishSession(ctx, announced);

    std::vector<DeviceId> live;
    live.reserve(announced.size());
    for (const Announced& a : announced) live.push_back(a.id);
    SecretBytes b(kSecretBytes);
    ctx.rng.FillBytes(b.data(), b.size());
    ASSIGN_OR_RETURN(SecretBytes s_sk_bytes, s_sk_.ExportBytes());
    ASSIGN_OR_RETURN(std::unique_ptr<HolderShares> split,
                     SplitAmongHolders(ctx, live, s_sk_bytes.span(), b.span()));

    ShareKeys out;
    out.header = ctx.Header(Phase::kShareKeys);
    ASSIGN_OR_RETURN(out.b_commitment,
                     CommitSelfMaskSeed(b.span(), ctx.config.aggregation_id, ctx.self));
    out.shares.reserve(announced.size());
    std::vector<Peer> peers;
    peers.reserve(announced.size());
    for (size_t p = 0; p < split->holders.size(); ++p) {
      if (p == split->self_pos) continue;
      const Announced& a = announced[split->LiveIndex(p)];
      ASSIGN_OR_RETURN(ChannelKeys keys,
                       DeriveChannelKeys(c_sk_, a.c_pk, ctx.config.aggregation_id, ctx.self, a.id));
      const SecretBytes plain =
          EncodeShareBundle(ShareBundle{ctx.self, a.id, split->dropout[p], split->b[p]});
      ASSIGN_OR_RETURN(
          std::vector<uint8_t> sealed,
          crypto::AesGcmSeal(keys.send.span(), plain.span(),
                             ShareBundleAad(ctx.config.aggregation_id, ctx.self, a.id), ctx.rng));
      out.shares.push_back({a.id, std::move(sealed)});
      peers.push_back({a.id, a.s_pk, std::move(keys.receive), SecretBytes()});
    }

    // c_sk dies with this phase: nothing after ShareKeys is sealed by us.
    return ClientTransition{MakeMaskedInputPhase(std::move(s_sk_), std::move(b), std::move(peers),
                                                 split->b[split->self_pos]),
                            ClientMessage(std::move(out))};
  }

 private:
  struct Announced {
    DeviceId id;
    X25519PublicKey c_pk;
    X25519PublicKey s_pk;
  };

  // The setup of a session: one agreement per key and neighbour, kept for
  // the whole session; then this aggregation shares as every session round.
  absl::StatusOr<ClientTransition> EstablishSession(ClientContext& ctx,
                                                    const std::vector<Announced>& announced) {
    std::vector<ClientSession::Peer> peers;
    peers.reserve(announced.size());
    std::vector<DeviceId> live;
    for (const Announced& a : announced) {
      ASSIGN_OR_RETURN(ChannelKeys keys,
                       DeriveChannelKeys(c_sk_, a.c_pk, ctx.config.aggregation_id, ctx.self, a.id));
      ASSIGN_OR_RETURN(SecretBytes mask_key,
                       DeriveMaskSeed(s_sk_, a.s_pk, ctx.config.aggregation_id, ctx.self, a.id));
      peers.push_back({a.id, std::move(keys.send), std::move(keys.receive), std::move(mask_key)});
      live.push_back(a.id);
    }
    ctx.session->Establish(ctx.config, ctx.self, ctx.neighbours, ctx.signing.has_value(),
                           std::move(peers), ctx.peer_signing_keys);
    return ShareInSession(ctx, live);
  }

  X25519PrivateKey c_sk_;
  X25519PrivateKey s_sk_;
};

}  // namespace

std::unique_ptr<ClientPhase> MakeShareKeysPhase(crypto::X25519PrivateKey c_sk,
                                                crypto::X25519PrivateKey s_sk) {
  return std::make_unique<ShareKeysPhase>(std::move(c_sk), std::move(s_sk));
}

}  // namespace fedmf::secagg::internal
