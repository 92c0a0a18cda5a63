#include "common/secagg/internal/client_r2_masked_input.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/aes_gcm.h"
#include "common/secagg/internal/client_consistency_check.h"
#include "common/secagg/internal/client_r3_unmasking.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/mask.h"
#include "common/secagg/share_bundle.h"

namespace fedmf::secagg::internal {
namespace {

using crypto::SecretBytes;
using crypto::ShamirShare;
using crypto::X25519PrivateKey;

class MaskedInputPhase final : public ClientPhase {
 public:
  // `s_sk` for a per-aggregation run; nullopt in a session round, whose
  // peers carry their round seeds.
  MaskedInputPhase(std::optional<X25519PrivateKey> s_sk, SecretBytes b, std::vector<Peer> peers,
                   ShamirShare own_b_share)
      : s_sk_(std::move(s_sk)),
        b_(std::move(b)),
        peers_(std::move(peers)),
        own_b_share_(std::move(own_b_share)) {}
  ~MaskedInputPhase() override { Wipe(own_b_share_); }

  ClientState state() const override { return ClientState::kR2MaskedInput; }

  absl::StatusOr<ClientTransition> Handle(ClientContext& ctx,
                                          const ServerMessage& message) override {
    const auto* request = std::get_if<MaskedInputRequest>(&message);
    if (request == nullptr) return Unexpected(message, state());
    if (!ctx.input.has_value()) {
      return absl::FailedPreconditionError("masked input requested before the input was set");
    }

    // Open every bundle first: the set of senders is U2 as this device sees
    // it, and it masks with exactly those.
    if (request->shares.size() > peers_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(request->shares.size(), " share bundles from ",
                                                     peers_.size(), " live neighbours"));
    }
    std::vector<HeldShares> held;
    std::vector<const Peer*> live;
    held.reserve(request->shares.size());
    for (const EncryptedShares& es : request->shares) {
      const auto peer = std::lower_bound(peers_.begin(), peers_.end(), es.peer,
                                         [](const Peer& p, DeviceId id) { return p.id < id; });
      if (peer == peers_.end() || peer->id != es.peer) {
        return absl::InvalidArgumentError(
            absl::StrCat("share bundle from ", es.peer, ", which is not a live neighbour"));
      }
      if (es.ciphertext.size() != kSealedShareBundleBytes) {
        return absl::InvalidArgumentError(absl::StrCat("share bundle from ", es.peer, " has ",
                                                       es.ciphertext.size(), " bytes, expected ",
                                                       kSealedShareBundleBytes));
      }
      absl::StatusOr<SecretBytes> plain =
          crypto::AesGcmOpen(peer->receive_key.span(), es.ciphertext,
                             ShareBundleAad(ctx.config.aggregation_id, es.peer, ctx.self));
      if (!plain.ok()) {
        return absl::DataLossError(absl::StrCat("share bundle from ", es.peer,
                                                " does not decrypt: ", plain.status().message()));
      }
      ASSIGN_OR_RETURN(ShareBundle bundle, DecodeShareBundle(plain->span()));
      if (bundle.owner != es.peer || bundle.holder != ctx.self) {
        return absl::InvalidArgumentError(absl::StrCat("share bundle from ", es.peer,
                                                       " names owner ", bundle.owner,
                                                       " and holder ", bundle.holder));
      }
      held.push_back({es.peer, std::move(bundle.s_sk_share), std::move(bundle.b_share)});
      live.push_back(&*peer);
    }
    std::sort(held.begin(), held.end(),
              [](const HeldShares& a, const HeldShares& b) { return a.owner < b.owner; });
    if (std::adjacent_find(held.begin(), held.end(), [](const HeldShares& a, const HeldShares& b) {
          return a.owner == b.owner;
        }) != held.end()) {
      return absl::InvalidArgumentError("two share bundles from one neighbour");
    }
    // With fewer than t live holders our secrets could never be recovered,
    // and a server that shrinks U2 around us is how it would isolate us.
    if (held.size() + 1 < static_cast<size_t>(ctx.config.threshold)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "only ", held.size(), " neighbours shared keys; threshold is ", ctx.config.threshold));
    }

    // y = x + PRG(b) + Σ_{j<i} PRG(s_ij) − Σ_{j>i} PRG(s_ij)  (mod 2^bits).
    std::vector<uint64_t> y = std::move(*ctx.input);
    ctx.input.reset();
    std::vector<SecretBytes> agreed;  // per-aggregation runs: the seeds s_ij
    if (s_sk_.has_value()) {
      agreed.reserve(live.size());
      for (const Peer* peer : live) {
        ASSIGN_OR_RETURN(
            SecretBytes seed,
            DeriveMaskSeed(*s_sk_, peer->s_pk, ctx.config.aggregation_id, ctx.self, peer->id));
        agreed.push_back(std::move(seed));
      }
    }
    std::vector<MaskTerm> terms;
    terms.reserve(live.size() + 1);
    terms.push_back({b_.span(), crypto::MaskSign::kAdd});
    for (size_t k = 0; k < live.size(); ++k) {
      const Peer* peer = live[k];
      terms.push_back({s_sk_.has_value() ? agreed[k].span() : peer->round_seed.span(),
                       peer->id < ctx.self ? crypto::MaskSign::kAdd : crypto::MaskSign::kSubtract});
    }
    RETURN_IF_ERROR(ApplyMasks(terms, ctx.config.bits, y));

    MaskedInput out;
    out.header = ctx.Header(Phase::kMaskedInput);
    out.masked = std::move(y);
    std::unique_ptr<ClientPhase> next;
    if (ctx.signing.has_value()) {
      next = MakeConsistencyCheckPhase(std::move(held), own_b_share_);
    } else {
      next = MakeUnmaskingPhase(std::move(held), own_b_share_);
    }
    return ClientTransition{std::move(next), ClientMessage(std::move(out))};
  }

 private:
  std::optional<X25519PrivateKey> s_sk_;
  SecretBytes b_;
  std::vector<Peer> peers_;  // sorted by id
  ShamirShare own_b_share_;
};

}  // namespace

std::unique_ptr<ClientPhase> MakeMaskedInputPhase(std::optional<crypto::X25519PrivateKey> s_sk,
                                                  crypto::SecretBytes b, std::vector<Peer> peers,
                                                  crypto::ShamirShare own_b_share) {
  return std::make_unique<MaskedInputPhase>(std::move(s_sk), std::move(b), std::move(peers),
                                            std::move(own_b_share));
}

}  // namespace fedmf::secagg::internal
