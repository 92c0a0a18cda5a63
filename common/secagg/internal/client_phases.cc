#include "common/secagg/internal/client_phases.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/aes_ctr_prg.h"
#include "common/crypto/aes_gcm.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/mask.h"
#include "common/secagg/share_bundle.h"

namespace fedmf::secagg::internal {
namespace {

using crypto::SecretBytes;
using crypto::ShamirShare;
using crypto::X25519PrivateKey;
using crypto::X25519PublicKey;

absl::Status Unexpected(const ServerMessage& message, ClientState state) {
  return absl::FailedPreconditionError(
      absl::StrCat("unexpected ", MessageName(message), " in state ", ClientStateName(state)));
}

bool Contains(const std::vector<DeviceId>& sorted, DeviceId id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

// Sorted copy of `ids`; error on duplicates.
absl::StatusOr<std::vector<DeviceId>> SortedUnique(std::vector<DeviceId> ids, const char* what) {
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) {
    return absl::InvalidArgumentError(absl::StrCat("duplicate device in ", what));
  }
  return ids;
}

// What a device knows about one live neighbour after the key broadcast.
struct Peer {
  DeviceId id = 0;
  X25519PublicKey s_pk{};   // per-aggregation runs: agreed with s_sk in MaskedInput
  SecretBytes receive_key;  // opens what the peer sealed to us
  SecretBytes round_seed;   // session rounds: m_ij^r, already derived
};

// A peer's shares of its own secrets, as received in the MaskedInputRequest.
struct HeldShares {
  DeviceId owner = 0;
  ShamirShare s_sk_share;
  ShamirShare b_share;
};

// Shares are as sensitive as secrets once t of them meet; wipe on the way out.
void Wipe(ShamirShare& s) {
  if (!s.y.empty()) OPENSSL_cleanse(s.y.data(), s.y.size());
}

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

// ---------------------------------------------------------------- kR3

class UnmaskingPhase final : public ClientPhase {
 public:
  // `signed_u3`: the survivor set this device signed in the consistency
  // check (signing clients only).
  UnmaskingPhase(std::vector<HeldShares> held, ShamirShare own_b_share,
                 std::optional<std::vector<DeviceId>> signed_u3 = std::nullopt)
      : held_(std::move(held)),
        own_b_share_(std::move(own_b_share)),
        signed_u3_(std::move(signed_u3)) {}
  ~UnmaskingPhase() override {
    for (HeldShares& h : held_) {
      Wipe(h.s_sk_share);
      Wipe(h.b_share);
    }
    Wipe(own_b_share_);
  }

  ClientState state() const override { return ClientState::kR3Unmasking; }

  absl::StatusOr<ClientTransition> Handle(ClientContext& ctx,
                                          const ServerMessage& message) override {
    const auto* request = std::get_if<UnmaskingRequest>(&message);
    if (request == nullptr) return Unexpected(message, state());
    // Bounds the work on untrusted lists; the exact checks follow.
    if (request->survivors.size() > held_.size() || request->dropped.size() > held_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unmasking request lists more devices than the ", held_.size(),
                       " this device masked with"));
    }
    absl::StatusOr<std::vector<DeviceId>> survivors =
        SortedUnique(request->survivors, "unmasking survivors");
    if (!survivors.ok()) return survivors.status();
    absl::StatusOr<std::vector<DeviceId>> dropped =
        SortedUnique(request->dropped, "unmasking dropped list");
    if (!dropped.ok()) return dropped.status();

    // The two lists must partition exactly the neighbours whose shares we
    // hold (= those we masked with). Anything else is the server asking for
    // something we never agreed to: in particular a device in both lists
    // would make us reveal both of its secrets.
    std::vector<DeviceId> both;
    std::set_intersection(survivors->begin(), survivors->end(), dropped->begin(), dropped->end(),
                          std::back_inserter(both));
    if (!both.empty()) {
      return absl::PermissionDeniedError(
          absl::StrCat("unmasking request lists device ", both.front(),
                       " as both survivor and dropped: refusing to reveal both of its shares"));
    }
    if (Contains(*survivors, ctx.self) || Contains(*dropped, ctx.self)) {
      return absl::InvalidArgumentError("unmasking request lists this device itself");
    }
    std::vector<DeviceId> listed;
    std::merge(survivors->begin(), survivors->end(), dropped->begin(), dropped->end(),
               std::back_inserter(listed));
    std::vector<DeviceId> held_ids;
    for (const HeldShares& h : held_) held_ids.push_back(h.owner);
    if (listed != held_ids) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unmasking request covers ", listed.size(), " devices but this device masked with ",
          held_ids.size(), " (the survivor/dropped sets disagree with the shares it received)"));
    }

    if (signed_u3_.has_value()) {
      RETURN_IF_ERROR(CheckConsistency(ctx, *request, *survivors));
    } else if (!request->signatures.empty()) {
      return absl::InvalidArgumentError("unmasking request carries unexpected signatures");
    }

    UnmaskingResponse response;
    response.header = ctx.Header(Phase::kUnmasking);
    response.b_shares.push_back({ctx.self, crypto::SerializeShamirShare(own_b_share_)});
    for (const HeldShares& h : held_) {
      if (Contains(*survivors, h.owner)) {
        response.b_shares.push_back({h.owner, crypto::SerializeShamirShare(h.b_share)});
      } else {
        response.s_sk_shares.push_back({h.owner, crypto::SerializeShamirShare(h.s_sk_share)});
      }
    }
    return ClientTransition{nullptr, ClientMessage(std::move(response))};
  }

 private:
  // The request must agree with the U3 we signed, and carry valid signatures
  // over that same U3 from enough of our neighbours that, with ours, they
  // reach the threshold. One invalid signature is proof of equivocation.
  absl::Status CheckConsistency(const ClientContext& ctx, const UnmaskingRequest& request,
                                const std::vector<DeviceId>& survivors) const {
    const std::vector<DeviceId>& u3 = *signed_u3_;
    for (const HeldShares& h : held_) {
      if (Contains(u3, h.owner) != Contains(survivors, h.owner)) {
        return absl::PermissionDeniedError(
            absl::StrCat("unmasking request treats device ", h.owner,
                         " differently from the survivor set this device signed (equivocation)"));
      }
    }
    if (request.signatures.size() > ctx.peer_signing_keys.size()) {
      return absl::InvalidArgumentError("more consistency signatures than neighbours");
    }
    const std::vector<uint8_t> statement = SurvivorSetStatement(ctx.config.aggregation_id, u3);
    // t-1 valid neighbour signatures (t with ours) are what the argument
    // needs; verifying more would cost k Ed25519 verifications per device
    // for nothing a server forwarding only t-1 could not also have done.
    // Every entry is still checked for who it claims to be from.
    const size_t wanted = static_cast<size_t>(ctx.config.threshold) - 1;
    std::vector<DeviceId> signers;
    size_t verified = 0;
    for (const DeviceSignature& ds : request.signatures) {
      const auto key =
          std::lower_bound(ctx.peer_signing_keys.begin(), ctx.peer_signing_keys.end(), ds.device,
                           [](const auto& p, DeviceId id) { return p.first < id; });
      if (key == ctx.peer_signing_keys.end() || key->first != ds.device) {
        return absl::InvalidArgumentError(absl::StrCat("consistency signature of ", ds.device,
                                                       ", which is not a live neighbour"));
      }
      if (!Contains(u3, ds.device)) {
        return absl::InvalidArgumentError(absl::StrCat("consistency signature of ", ds.device,
                                                       ", which is not in the survivor set"));
      }
      signers.push_back(ds.device);
      if (verified == wanted) continue;
      if (absl::Status s = crypto::Ed25519Verify(key->second, statement, ds.signature); !s.ok()) {
        return absl::PermissionDeniedError(
            absl::StrCat("device ", ds.device, " did not sign the survivor set this device signed ",
                         "(the server told devices different survivor sets?): ", s.message()));
      }
      ++verified;
    }
    std::sort(signers.begin(), signers.end());
    if (std::adjacent_find(signers.begin(), signers.end()) != signers.end()) {
      return absl::InvalidArgumentError("two consistency signatures of one device");
    }
    if (verified < wanted) {
      return absl::FailedPreconditionError(
          absl::StrCat("only ", verified + 1, " consistency signatures on the survivor set (this ",
                       "device's included); threshold is ", ctx.config.threshold));
    }
    return absl::OkStatus();
  }

  std::vector<HeldShares> held_;  // sorted by owner
  ShamirShare own_b_share_;
  std::optional<std::vector<DeviceId>> signed_u3_;  // sorted
};

// ---------------------------------------------------------------- consistency check

// Signing clients only: sign the survivor set U3 the server announces, once.
class ConsistencyCheckPhase final : public ClientPhase {
 public:
  ConsistencyCheckPhase(std::vector<HeldShares> held, ShamirShare own_b_share)
      : held_(std::move(held)), own_b_share_(std::move(own_b_share)) {}
  ~ConsistencyCheckPhase() override {
    for (HeldShares& h : held_) {
      Wipe(h.s_sk_share);
      Wipe(h.b_share);
    }
    Wipe(own_b_share_);
  }

  ClientState state() const override { return ClientState::kConsistencyCheck; }

  absl::StatusOr<ClientTransition> Handle(ClientContext& ctx,
                                          const ServerMessage& message) override {
    const auto* request = std::get_if<ConsistencyCheckRequest>(&message);
    if (request == nullptr) return Unexpected(message, state());
    if (request->survivors.size() > ctx.config.roster.size()) {
      return absl::InvalidArgumentError("survivor set larger than the roster");
    }
    absl::StatusOr<std::vector<DeviceId>> u3 =
        SortedUnique(request->survivors, "consistency-check survivor set");
    if (!u3.ok()) return u3.status();
    if (!Contains(*u3, ctx.self)) {
      return absl::FailedPreconditionError(
          "consistency check: this device, whose masked input was sent, is not in the survivor "
          "set");
    }
    if (u3->size() < static_cast<size_t>(ctx.config.min_survivors)) {
      return absl::FailedPreconditionError(absl::StrCat("consistency check: survivor set of ",
                                                        u3->size(), " devices; min_survivors is ",
                                                        ctx.config.min_survivors));
    }
    std::vector<DeviceId> held_ids;
    for (const HeldShares& h : held_) held_ids.push_back(h.owner);
    for (DeviceId d : *u3) {
      if (!std::binary_search(ctx.config.roster.begin(), ctx.config.roster.end(), d)) {
        return absl::InvalidArgumentError(
            absl::StrCat("consistency check names device ", d, ", not in the roster"));
      }
      // U3 ⊆ U2: a neighbour that survived must have shared keys with us.
      if (d != ctx.self && Contains(ctx.neighbours, d) && !Contains(held_ids, d)) {
        return absl::InvalidArgumentError(absl::StrCat("consistency check lists neighbour ", d,
                                                       " as a survivor, but it never shared keys"));
      }
    }
    absl::StatusOr<std::vector<uint8_t>> sig =
        ctx.signing->key.Sign(SurvivorSetStatement(ctx.config.aggregation_id, *u3));
    if (!sig.ok()) return sig.status();
    ConsistencySignature out;
    out.header = ctx.Header(Phase::kConsistencyCheck);
    out.signature = std::move(*sig);
    return ClientTransition{
        std::make_unique<UnmaskingPhase>(std::move(held_), own_b_share_, std::move(*u3)),
        ClientMessage(std::move(out))};
  }

 private:
  std::vector<HeldShares> held_;  // sorted by owner
  ShamirShare own_b_share_;
};

// ---------------------------------------------------------------- kR2

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
      next = std::make_unique<ConsistencyCheckPhase>(std::move(held), own_b_share_);
    } else {
      next = std::make_unique<UnmaskingPhase>(std::move(held), own_b_share_);
    }
    return ClientTransition{std::move(next), ClientMessage(std::move(out))};
  }

 private:
  std::optional<X25519PrivateKey> s_sk_;
  SecretBytes b_;
  std::vector<Peer> peers_;  // sorted by id
  ShamirShare own_b_share_;
};

// ---------------------------------------------------------------- kR1 (both kinds)

// A device's two secrets split among its holders H(i) = {i} ∪ live, sorted;
// the holder at position p gets x = p + 1. Shares are wiped on the way out.
struct HolderShares {
  std::vector<DeviceId> holders;
  size_t self_pos = 0;
  std::vector<ShamirShare> dropout;  // of s_sk (per aggregation) or e (session)
  std::vector<ShamirShare> b;
  ~HolderShares() {
    for (ShamirShare& s : dropout) Wipe(s);
    for (ShamirShare& s : b) Wipe(s);
  }
  // The live neighbour at holder position p != self_pos, as an index into `live`.
  size_t LiveIndex(size_t p) const { return p < self_pos ? p : p - 1; }
};

// `live`: sorted ids of the live neighbours; both secrets kSecretBytes long.
absl::StatusOr<std::unique_ptr<HolderShares>> SplitAmongHolders(
    ClientContext& ctx, const std::vector<DeviceId>& live, std::span<const uint8_t> dropout_secret,
    std::span<const uint8_t> b) {
  auto out = std::make_unique<HolderShares>();
  out->holders = live;
  const auto self = std::lower_bound(out->holders.begin(), out->holders.end(), ctx.self);
  out->self_pos = static_cast<size_t>(self - out->holders.begin());
  out->holders.insert(self, ctx.self);
  const size_t t = static_cast<size_t>(ctx.config.threshold);
  ASSIGN_OR_RETURN(out->dropout,
                   crypto::ShamirSplit(dropout_secret, t, out->holders.size(), ctx.rng));
  ASSIGN_OR_RETURN(out->b, crypto::ShamirSplit(b, t, out->holders.size(), ctx.rng));
  return out;
}

// ---------------------------------------------------------------- kR1 (session rounds)

// The sharing step of a session round (session.h): fresh b and e shared among
// {self} ∪ live, sealed under the session's channel keys; every live
// neighbour's round seed m_ij^r is derived here and sent hidden under
// HKDF(e, j). `live`: sorted ids, each a session peer.
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
      std::make_unique<MaskedInputPhase>(std::nullopt, std::move(b), std::move(peers),
                                         split->b[split->self_pos]),
      ClientMessage(std::move(out))};
}

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

// ---------------------------------------------------------------- kR1

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
    return ClientTransition{
        std::make_unique<MaskedInputPhase>(std::move(s_sk_), std::move(b), std::move(peers),
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

// ---------------------------------------------------------------- kR0

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
    return ClientTransition{std::make_unique<ShareKeysPhase>(std::move(c_sk), std::move(s_sk)),
                            ClientMessage(std::move(out))};
  }

  // A session round after the setup: a check-in with no keys.
  static absl::StatusOr<ClientTransition> CheckIn(ClientContext& ctx) {
    AdvertiseKeys out;
    out.header = ctx.Header(Phase::kAdvertiseKeys);
    return ClientTransition{std::make_unique<SessionShareKeysPhase>(),
                            ClientMessage(std::move(out))};
  }

  absl::StatusOr<ClientTransition> Handle(ClientContext&, const ServerMessage& message) override {
    return Unexpected(message, state());
  }
};

}  // namespace

absl::StatusOr<ClientTransition> ClientPhase::Start(ClientContext&) {
  return absl::FailedPreconditionError(absl::StrCat("Start() in state ", ClientStateName(state())));
}

std::unique_ptr<ClientPhase> MakeClientInitialPhase() {
  return std::make_unique<AdvertiseKeysPhase>();
}

}  // namespace fedmf::secagg::internal
