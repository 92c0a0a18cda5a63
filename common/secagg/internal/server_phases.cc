#include "common/secagg/internal/server_phases.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/mod2k.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/share_bundle.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg::internal {

size_t Count(const DeviceSet& set) {
  return static_cast<size_t>(std::count(set.begin(), set.end(), char{1}));
}

std::vector<size_t> ServerContext::NeighboursIn(size_t index, const DeviceSet& set) const {
  std::vector<size_t> out = graph.NeighbourIndices(index);
  out.erase(std::remove_if(out.begin(), out.end(), [&](size_t j) { return !set[j]; }), out.end());
  return out;
}

uint32_t ServerContext::HolderX(size_t owner, size_t holder) const {
  if (config.graph == GraphKind::kComplete) return u1_rank[holder] + 1;
  const DeviceSet& u1 = *survivors[0];
  uint32_t rank = owner < holder ? 1 : 0;  // the owner itself is a holder
  graph.ForEachNeighbour(owner, [&](size_t j) { rank += j < holder && u1[j] ? 1 : 0; });
  return rank + 1;
}

// ---------------------------------------------------------------- base

ServerPhase::ServerPhase(DeviceSet eligible)
    : eligible_(std::move(eligible)),
      received_(eligible_.size(), 0),
      excluded_(eligible_.size(), 0) {}

Verdict ServerPhase::Receive(ServerContext& ctx, size_t index, const ClientMessage& message) {
  if (!eligible_[index]) {
    return {absl::FailedPreconditionError(
                absl::StrCat("device is not in the aggregation in phase ", PhaseName(phase()))),
            false};
  }
  if (excluded_[index]) {
    return {absl::FailedPreconditionError("device was already dropped in this phase"), false};
  }
  if (received_[index]) {
    return Penalize(ctx, index,
                    absl::AlreadyExistsError(absl::StrCat("second ", MessageName(message),
                                                          " in phase ", PhaseName(phase()))));
  }
  if (absl::Status s = Accept(ctx, index, message); !s.ok()) {
    excluded_[index] = 1;
    return {s, true};
  }
  received_[index] = 1;
  return {absl::OkStatus(), false};
}

Verdict ServerPhase::Penalize(ServerContext& ctx, size_t index, absl::Status reason) {
  if (!eligible_[index] || excluded_[index]) return {std::move(reason), false};
  if (received_[index] && Committed(index)) return {std::move(reason), false};
  Discard(ctx, index);
  received_[index] = 0;
  excluded_[index] = 1;
  return {std::move(reason), true};
}

bool ServerPhase::AllExpectedReceived() const {
  for (size_t i = 0; i < eligible_.size(); ++i) {
    if (eligible_[i] && !excluded_[i] && !received_[i]) return false;
  }
  return true;
}

DeviceSet ServerPhase::Survivors() const {
  DeviceSet out(eligible_.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = eligible_[i] && received_[i] && !excluded_[i];
  return out;
}

ServerTransition ServerPhase::AbortWith(ServerContext& ctx, absl::Status reason) const {
  ctx.abort_reason = std::move(reason);
  ServerTransition t;
  for (size_t i = 0; i < eligible_.size(); ++i) {
    if (!eligible_[i] || excluded_[i]) continue;
    t.out.push_back(
        AbortNotice{ctx.HeaderTo(i, Phase::kAbort), std::string(ctx.abort_reason.message())});
  }
  return t;
}

namespace {

// Credentials are certificate-sized; bounds what one device can make the
// server store and relay to all of its neighbours.
constexpr size_t kMaxCredentialBytes = 16 * 1024;

absl::Status TooFew(Phase phase, size_t have, int need) {
  return absl::AbortedError(absl::StrCat("only ", have, " devices left after ", PhaseName(phase),
                                         "; min_survivors is ", need));
}

// ---------------------------------------------------------------- consistency check

// Collects every U3 member's signature over U3 and hands each signer the
// signatures of its neighbours that signed too. Members that do not sign stay
// in the sum (their input is committed) but are not asked to unmask.
class ConsistencyCollection final : public ServerPhase {
 public:
  ConsistencyCollection(DeviceSet u3, DeviceSet dropped, std::vector<uint8_t> statement)
      : ServerPhase(std::move(u3)),
        dropped_(std::move(dropped)),
        statement_(std::move(statement)),
        signatures_(eligible_.size()) {}
  ServerState state() const override { return ServerState::kConsistencyCheck; }
  Phase phase() const override { return Phase::kConsistencyCheck; }

  absl::StatusOr<ServerTransition> Close(ServerContext& ctx) override {
    const DeviceSet signers = Survivors();
    const size_t have = Count(signers);
    if (have < static_cast<size_t>(ctx.config.min_survivors)) {
      return AbortWith(ctx, TooFew(phase(), have, ctx.config.min_survivors));
    }
    const DeviceSet& u3 = eligible_;
    DeviceSet not_asked(u3.size(), 0);
    ServerTransition t;
    for (size_t i = 0; i < u3.size(); ++i) {
      if (!u3[i]) continue;
      if (!signers[i]) {
        not_asked[i] = 1;
        continue;
      }
      UnmaskingRequest req;
      req.header = ctx.HeaderTo(i, Phase::kUnmasking);
      for (size_t j : ctx.graph.NeighbourIndices(i)) {
        if (u3[j]) req.survivors.push_back(ctx.config.roster[j]);
        if (dropped_[j]) req.dropped.push_back(ctx.config.roster[j]);
        // t-1 are what the device checks (client_phases.cc); all of them
        // were verified here already.
        if (signers[j] && req.signatures.size() + 1 < static_cast<size_t>(ctx.config.threshold)) {
          req.signatures.push_back({ctx.config.roster[j], signatures_[j]});
        }
      }
      t.out.push_back(std::move(req));
    }
    t.next = MakeUnmaskingPhase(u3, std::move(dropped_), std::move(not_asked));
    return t;
  }

 protected:
  absl::Status Accept(ServerContext& ctx, size_t index, const ClientMessage& message) override {
    const auto& m = std::get<ConsistencySignature>(message);
    absl::StatusOr<crypto::Ed25519PublicKey> vk =
        crypto::ParseEd25519PublicKey(ctx.signing_key[index]);
    if (!vk.ok()) return vk.status();
    // A device signing something else would make its honest neighbours abort;
    // drop it here instead.
    RETURN_IF_ERROR(crypto::Ed25519Verify(*vk, statement_, m.signature));
    signatures_[index] = m.signature;
    return absl::OkStatus();
  }
  void Discard(ServerContext&, size_t index) override { signatures_[index].clear(); }

 private:
  DeviceSet dropped_;
  std::vector<uint8_t> statement_;
  std::vector<std::vector<uint8_t>> signatures_;
};

// ---------------------------------------------------------------- kR2

class MaskedInputCollection final : public ServerPhase {
 public:
  explicit MaskedInputCollection(DeviceSet u2) : ServerPhase(std::move(u2)) {}
  ServerState state() const override { return ServerState::kR2MaskedInput; }
  Phase phase() const override { return Phase::kMaskedInput; }

  absl::StatusOr<ServerTransition> Close(ServerContext& ctx) override {
    DeviceSet u3 = Survivors();
    ctx.survivors[2] = u3;
    const size_t have = Count(u3);
    if (have < static_cast<size_t>(ctx.config.min_survivors)) {
      return AbortWith(ctx, TooFew(phase(), have, ctx.config.min_survivors));
    }
    DeviceSet dropped(u3.size(), 0);
    for (size_t i = 0; i < u3.size(); ++i) dropped[i] = eligible_[i] && !u3[i];
    ServerTransition t;
    if (ctx.config.consistency_check) {
      std::vector<DeviceId> ids;
      for (size_t i = 0; i < u3.size(); ++i) {
        if (u3[i]) ids.push_back(ctx.config.roster[i]);
      }
      for (size_t i = 0; i < u3.size(); ++i) {
        if (u3[i])
          t.out.push_back(ConsistencyCheckRequest{ctx.HeaderTo(i, Phase::kConsistencyCheck), ids});
      }
      t.next = std::make_unique<ConsistencyCollection>(
          std::move(u3), std::move(dropped), SurvivorSetStatement(ctx.config.aggregation_id, ids));
      return t;
    }
    for (size_t i = 0; i < u3.size(); ++i) {
      if (!u3[i]) continue;
      UnmaskingRequest req;
      req.header = ctx.HeaderTo(i, Phase::kUnmasking);
      for (size_t j : ctx.graph.NeighbourIndices(i)) {
        if (u3[j]) req.survivors.push_back(ctx.config.roster[j]);
        if (dropped[j]) req.dropped.push_back(ctx.config.roster[j]);
      }
      t.out.push_back(std::move(req));
    }
    t.next = MakeUnmaskingPhase(std::move(u3), std::move(dropped));
    return t;
  }

 protected:
  absl::Status Accept(ServerContext& ctx, size_t, const ClientMessage& message) override {
    const auto& m = std::get<MaskedInput>(message);
    if (m.masked.size() != ctx.config.vector_length) {
      return absl::InvalidArgumentError(absl::StrCat(
          "masked input has ", m.masked.size(), " elements, expected ", ctx.config.vector_length));
    }
    // Check everything before touching the running sum.
    const uint64_t high = ~crypto::LowBitsMask(ctx.config.bits);
    uint64_t any_high = 0;
    for (uint64_t v : m.masked) any_high |= v & high;
    if (any_high != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("masked input has elements >= 2^", ctx.config.bits));
    }
    return crypto::AddMod2k(ctx.sum, m.masked, ctx.config.bits);
  }
  bool Committed(size_t index) const override { return received_[index] != 0; }
};

// ---------------------------------------------------------------- kR1

class ShareKeysCollection final : public ServerPhase {
 public:
  explicit ShareKeysCollection(DeviceSet u1)
      : ServerPhase(std::move(u1)), pending_(eligible_.size()) {}
  ServerState state() const override { return ServerState::kR1ShareKeys; }
  Phase phase() const override { return Phase::kShareKeys; }

  absl::StatusOr<ServerTransition> Close(ServerContext& ctx) override {
    DeviceSet u2 = Survivors();
    ctx.survivors[1] = u2;
    const size_t have = Count(u2);
    if (have < static_cast<size_t>(ctx.config.min_survivors)) {
      return AbortWith(ctx, TooFew(phase(), have, ctx.config.min_survivors));
    }
    // Route each ciphertext to its recipient if both ends are in U2. Senders
    // are visited in roster order, so every inbox comes out sorted by sender.
    std::vector<MaskedInputRequest> inbox(u2.size());
    for (size_t i = 0; i < u2.size(); ++i) {
      if (!u2[i]) continue;
      ctx.b_commitment[i] = std::move(pending_[i]->b_commitment);
      if (ctx.session != nullptr) {
        ctx.recovery_commitment[i] = std::move(pending_[i]->recovery_commitment);
        ctx.mask_pads[i] = std::move(pending_[i]->mask_pads);
        std::sort(ctx.mask_pads[i].begin(), ctx.mask_pads[i].end(),
                  [](const MaskPad& a, const MaskPad& b) { return a.peer < b.peer; });
      }
      for (EncryptedShares& es : pending_[i]->shares) {
        const size_t j = *ctx.graph.IndexOf(es.peer);  // checked in Accept
        if (u2[j]) inbox[j].shares.push_back({ctx.config.roster[i], std::move(es.ciphertext)});
      }
      pending_[i].reset();
    }
    ServerTransition t;
    for (size_t j = 0; j < u2.size(); ++j) {
      if (!u2[j]) continue;
      inbox[j].header = ctx.HeaderTo(j, Phase::kMaskedInput);
      t.out.push_back(std::move(inbox[j]));
    }
    ctx.sum.assign(ctx.config.vector_length, 0);
    t.next = std::make_unique<MaskedInputCollection>(std::move(u2));
    return t;
  }

 protected:
  absl::Status Accept(ServerContext& ctx, size_t index, const ClientMessage& message) override {
    const auto& m = std::get<ShareKeys>(message);
    if (m.b_commitment.size() != kCommitmentBytes) {
      return absl::InvalidArgumentError(absl::StrCat("b commitment has ", m.b_commitment.size(),
                                                     " bytes, expected ", kCommitmentBytes));
    }
    // Exactly one bundle for every live neighbour: a missing one would leave
    // that neighbour unable to unmask us; an extra one is for a stranger.
    std::vector<DeviceId> expected;
    for (size_t j : ctx.NeighboursIn(index, *ctx.survivors[0])) {
      expected.push_back(ctx.config.roster[j]);
    }
    RETURN_IF_ERROR(CheckOnePerNeighbour(
        m.shares, expected, "share bundle", kSealedShareBundleBytes,
        [](const EncryptedShares& es) { return std::pair(es.peer, es.ciphertext.size()); }));
    RETURN_IF_ERROR(CheckSessionFields(ctx, m, expected));
    pending_[index] = m;
    return absl::OkStatus();
  }
  void Discard(ServerContext&, size_t index) override { pending_[index].reset(); }

 private:
  // Session rounds: a commitment to e and one pad for every live neighbour
  // (sorted `expected`); outside sessions, neither.
  static absl::Status CheckSessionFields(const ServerContext& ctx, const ShareKeys& m,
                                         const std::vector<DeviceId>& expected) {
    if (ctx.session == nullptr) {
      if (!m.recovery_commitment.empty() || !m.mask_pads.empty()) {
        return absl::InvalidArgumentError("session fields in an aggregation outside a session");
      }
      return absl::OkStatus();
    }
    if (m.recovery_commitment.size() != kCommitmentBytes) {
      return absl::InvalidArgumentError(absl::StrCat("recovery commitment has ",
                                                     m.recovery_commitment.size(),
                                                     " bytes, expected ", kCommitmentBytes));
    }
    return CheckOnePerNeighbour(m.mask_pads, expected, "mask pad", kSecretBytes,
                                [](const MaskPad& p) { return std::pair(p.peer, p.pad.size()); });
  }

  // Exactly one item of `bytes` bytes for every live neighbour (`expected`,
  // sorted): a missing one would leave that neighbour unable to unmask the
  // sender; an extra one is for a stranger. `peer_and_size(item)`.
  template <typename T, typename PeerAndSize>
  static absl::Status CheckOnePerNeighbour(const std::vector<T>& items,
                                           const std::vector<DeviceId>& expected, const char* what,
                                           size_t bytes, PeerAndSize peer_and_size) {
    if (items.size() != expected.size()) {  // before touching an untrusted-length list
      return absl::InvalidArgumentError(absl::StrCat(what, "s for ", items.size(),
                                                     " devices, expected exactly the ",
                                                     expected.size(), " live neighbours"));
    }
    std::vector<DeviceId> got;
    got.reserve(items.size());
    for (const T& item : items) {
      const auto [peer, size] = peer_and_size(item);
      if (size != bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " for ", peer, " has ", size, " bytes, expected ", bytes));
      }
      got.push_back(peer);
    }
    std::sort(got.begin(), got.end());
    if (std::adjacent_find(got.begin(), got.end()) != got.end()) {
      return absl::InvalidArgumentError(absl::StrCat("two ", what, "s for one neighbour"));
    }
    if (got != expected) {
      return absl::InvalidArgumentError(absl::StrCat(what, "s for ", got.size(),
                                                     " devices, expected exactly the ",
                                                     expected.size(), " live neighbours"));
    }
    return absl::OkStatus();
  }

  std::vector<std::optional<ShareKeys>> pending_;
};

// ---------------------------------------------------------------- kR0

class AdvertiseKeysCollection final : public ServerPhase {
 public:
  // `check_in`: a session round after the setup; only members may check in,
  // with no keys.
  AdvertiseKeysCollection(DeviceSet eligible, bool check_in)
      : ServerPhase(std::move(eligible)), check_in_(check_in) {}
  ServerState state() const override { return ServerState::kR0AdvertiseKeys; }
  Phase phase() const override { return Phase::kAdvertiseKeys; }

  absl::StatusOr<ServerTransition> Close(ServerContext& ctx) override {
    DeviceSet u1 = Survivors();
    if (!check_in_) ExcludeRepeatedKeys(ctx, u1);
    // Too few already: abort without blaming individual devices for it.
    if (Count(u1) >= static_cast<size_t>(ctx.config.min_survivors)) ExcludeIsolated(ctx, u1);
    ctx.survivors[0] = u1;
    ctx.u1_rank.assign(u1.size(), 0);
    for (size_t i = 1; i < u1.size(); ++i)
      ctx.u1_rank[i] = ctx.u1_rank[i - 1] + (u1[i - 1] ? 1 : 0);
    const size_t have = Count(u1);
    if (have < static_cast<size_t>(ctx.config.min_survivors)) {
      return AbortWith(ctx, TooFew(phase(), have, ctx.config.min_survivors));
    }
    if (ctx.session != nullptr && !ctx.session->established()) {
      ctx.session->Establish(ctx.config, u1, ctx.signing_key);
    }
    ServerTransition t;
    for (size_t i = 0; i < u1.size(); ++i) {
      if (!u1[i]) continue;
      KeysBroadcast b;
      b.header = ctx.HeaderTo(i, Phase::kShareKeys);
      for (size_t j : ctx.NeighboursIn(i, u1)) {
        if (check_in_) {
          NeighbourKeys id_only;
          id_only.device = ctx.config.roster[j];
          b.neighbours.push_back(std::move(id_only));
          continue;
        }
        b.neighbours.push_back({ctx.config.roster[j],
                                std::vector<uint8_t>(ctx.c_pk[j].begin(), ctx.c_pk[j].end()),
                                std::vector<uint8_t>(ctx.s_pk[j].begin(), ctx.s_pk[j].end()),
                                ctx.signing_key[j], ctx.credential[j], ctx.advert_signature[j]});
      }
      t.out.push_back(std::move(b));
    }
    t.next = std::make_unique<ShareKeysCollection>(std::move(u1));
    return t;
  }

 protected:
  absl::Status Accept(ServerContext& ctx, size_t index, const ClientMessage& message) override {
    const auto& m = std::get<AdvertiseKeys>(message);
    if (check_in_) {
      if (!m.c_pk.empty() || !m.s_pk.empty() || !m.signing_key.empty() || !m.credential.empty() ||
          !m.signature.empty()) {
        return absl::InvalidArgumentError(
            "keys in a session round's check-in (the session's keys are fixed at its setup)");
      }
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(crypto::X25519PublicKey c_pk, crypto::ParseX25519PublicKey(m.c_pk));
    ASSIGN_OR_RETURN(crypto::X25519PublicKey s_pk, crypto::ParseX25519PublicKey(m.s_pk));
    if (c_pk == s_pk) return absl::InvalidArgumentError("c_pk and s_pk are equal");
    if (IsLowOrderX25519Key(c_pk) || IsLowOrderX25519Key(s_pk)) {
      return absl::InvalidArgumentError("public key of small order");
    }
    if (ctx.config.consistency_check) {
      // Checked here too, so that one device's bad signature is its own
      // exclusion rather than every honest neighbour's abort.
      ASSIGN_OR_RETURN(crypto::Ed25519PublicKey vk, crypto::ParseEd25519PublicKey(m.signing_key));
      if (m.credential.size() > kMaxCredentialBytes) {
        return absl::InvalidArgumentError(absl::StrCat("credential of ", m.credential.size(),
                                                       " bytes; at most ", kMaxCredentialBytes));
      }
      if (absl::Status s = crypto::Ed25519Verify(
              vk,
              AdvertisementStatement(ctx.config.aggregation_id, ctx.config.roster[index], m.c_pk,
                                     m.s_pk, m.signing_key),
              m.signature);
          !s.ok()) {
        return s;
      }
      ctx.signing_key[index] = m.signing_key;
      ctx.credential[index] = m.credential;
      ctx.advert_signature[index] = m.signature;
    }
    ctx.c_pk[index] = c_pk;
    ctx.s_pk[index] = s_pk;
    return absl::OkStatus();
  }

 private:
  bool check_in_;

  void Exclude(ServerContext& ctx, DeviceSet& u1, size_t i, absl::Status reason) {
    u1[i] = 0;
    excluded_[i] = 1;
    ctx.rejections.push_back({ctx.config.roster[i], phase(), std::move(reason), true});
  }

  // Two devices announcing the same key would share masks or channel keys
  // with a third party's view; drop every device involved.
  void ExcludeRepeatedKeys(ServerContext& ctx, DeviceSet& u1) {
    std::vector<std::pair<crypto::X25519PublicKey, size_t>> keys;
    for (size_t i = 0; i < u1.size(); ++i) {
      if (!u1[i]) continue;
      keys.push_back({ctx.c_pk[i], i});
      keys.push_back({ctx.s_pk[i], i});
    }
    std::sort(keys.begin(), keys.end());
    std::vector<size_t> bad;
    for (size_t a = 0; a < keys.size();) {
      size_t b = a + 1;
      while (b < keys.size() && keys[b].first == keys[a].first) ++b;
      if (b - a > 1) {
        for (size_t c = a; c < b; ++c) bad.push_back(keys[c].second);
      }
      a = b;
    }
    std::sort(bad.begin(), bad.end());
    bad.erase(std::unique(bad.begin(), bad.end()), bad.end());
    for (size_t i : bad) {
      Exclude(ctx, u1, i,
              absl::InvalidArgumentError("public key also announced by another device"));
    }
  }

  // A device with fewer than t-1 live neighbours cannot give out t shares;
  // removing it can push its neighbours under, hence the work list.
  void ExcludeIsolated(ServerContext& ctx, DeviceSet& u1) {
    const size_t t = static_cast<size_t>(ctx.config.threshold);
    std::vector<size_t> degree(u1.size(), 0);
    std::deque<size_t> work;
    for (size_t i = 0; i < u1.size(); ++i) {
      if (!u1[i]) continue;
      degree[i] = ctx.NeighboursIn(i, u1).size();
      if (degree[i] + 1 < t) work.push_back(i);
    }
    while (!work.empty()) {
      const size_t i = work.front();
      work.pop_front();
      if (!u1[i]) continue;
      Exclude(ctx, u1, i,
              absl::FailedPreconditionError(absl::StrCat(
                  "only ", degree[i], " live neighbours; a device needs threshold-1 = ", t - 1)));
      for (size_t j : ctx.NeighboursIn(i, u1)) {
        if (--degree[j] + 1 < t) work.push_back(j);
      }
    }
  }
};

}  // namespace

std::unique_ptr<ServerPhase> MakeServerInitialPhase(const SessionConfig& config) {
  return std::make_unique<AdvertiseKeysCollection>(DeviceSet(config.roster.size(), 1), false);
}

std::unique_ptr<ServerPhase> MakeAdvertisePhase(DeviceSet eligible, bool check_in) {
  return std::make_unique<AdvertiseKeysCollection>(std::move(eligible), check_in);
}

}  // namespace fedmf::secagg::internal
