// The server's last phase: collect unmasking responses, recover b_i of every
// survivor and s_sk_j of every dropped device, and strip the masks off the
// running sum:
//   Σ_{i∈U3} y_i − Σ_{i∈U3} PRG(b_i) − Σ_{j∈D} Σ_{i∈N(j)∩U3} ±PRG(s_ij)
//   = Σ_{i∈U3} x_i,
// because pairwise masks between two members of U3 cancel, and every pair
// (i ∈ U3, j ∈ D) left one uncancelled ±PRG(s_ij) in y_i.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/parallel_for.h"
#include "common/base/status_macros.h"
#include "common/crypto/aes_ctr_prg.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/x25519.h"
#include "common/secagg/internal/server_phases.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/mask.h"
#include "common/secagg/secret_recovery.h"
#include "common/secagg/share_bundle.h"

namespace fedmf::secagg::internal {
namespace {

struct OwnedShare {
  size_t owner = 0;
  crypto::ShamirShare share;
};

// The masks the server strips off the sum: seeds it recovered or
// recomputed, each with the sign that undoes it.
class Unmasks {
 public:
  void Add(crypto::SecretBytes seed, crypto::MaskSign sign) {
    seeds_.push_back(std::move(seed));
    signs_.push_back(sign);
  }
  absl::Status ApplyTo(int bits, std::vector<uint64_t>& sum, int threads) const {
    std::vector<MaskTerm> terms;
    terms.reserve(seeds_.size());
    for (size_t k = 0; k < seeds_.size(); ++k) terms.push_back({seeds_[k].span(), signs_[k]});
    return ApplyMasks(terms, bits, sum, threads);
  }

 private:
  std::vector<crypto::SecretBytes> seeds_;  // wiped when the phase closes
  std::vector<crypto::MaskSign> signs_;
};

struct ParsedResponse {
  std::vector<OwnedShare> b_shares;
  std::vector<OwnedShare> s_sk_shares;
};

class Unmasking final : public ServerPhase {
 public:
  Unmasking(DeviceSet u3, DeviceSet dropped, DeviceSet not_asked)
      : ServerPhase(std::move(u3)), dropped_(std::move(dropped)), responses_(eligible_.size()) {
    if (!not_asked.empty()) excluded_ = std::move(not_asked);
  }
  ServerState state() const override { return ServerState::kR3Unmasking; }
  Phase phase() const override { return Phase::kUnmasking; }

  absl::StatusOr<ServerTransition> Close(ServerContext& ctx) override {
    const DeviceSet u4 = Survivors();
    ctx.survivors[3] = u4;
    const size_t have = Count(u4);
    if (have < static_cast<size_t>(ctx.config.min_survivors)) {
      return AbortWith(ctx, absl::AbortedError(absl::StrCat(
                                "only ", have, " devices answered the unmasking request; ",
                                "min_survivors is ", ctx.config.min_survivors)));
    }
    // Responders in roster order, so every owner's shares are sorted by holder.
    const size_t n = eligible_.size();
    std::vector<std::vector<HeldShare>> b_shares(n), s_shares(n);
    for (size_t r = 0; r < n; ++r) {
      if (!u4[r]) continue;
      for (OwnedShare& os : responses_[r]->b_shares) {
        b_shares[os.owner].push_back({ctx.config.roster[r], std::move(os.share)});
      }
      for (OwnedShare& os : responses_[r]->s_sk_shares) {
        s_shares[os.owner].push_back({ctx.config.roster[r], std::move(os.share)});
      }
      responses_[r].reset();
    }

    const int bits = ctx.config.bits;
    const size_t t = static_cast<size_t>(ctx.config.threshold);
    // Every mask to strip is collected first and applied in one pass
    // (ApplyMasks: each L1-sized block of the sum takes all keystreams), as
    // a device applies its own.
    Unmasks unmasks;
    // Survivors: remove PRG(b_i). Where nobody lied, the first t shares give
    // b_i without any randomness, so those are recovered on ctx.threads
    // threads; the rest go through Recover (ctx.rng, rejections) in roster
    // order as before, so the outcome does not depend on the threads.
    const auto verify_b = [&](size_t i) -> SecretVerifier {
      return [&ctx, i](const crypto::SecretBytes& b) {
        absl::StatusOr<std::vector<uint8_t>> c =
            CommitSelfMaskSeed(b.span(), ctx.config.aggregation_id, ctx.config.roster[i]);
        return c.ok() && crypto::ConstantTimeEquals(*c, ctx.b_commitment[i]);
      };
    };
    std::vector<size_t> owners;
    for (size_t i = 0; i < n; ++i) {
      if (eligible_[i]) owners.push_back(i);
    }
    std::vector<std::optional<crypto::SecretBytes>> first(owners.size());
    base::ParallelFor(owners.size(), ctx.threads, [&](size_t k) {
      std::vector<HeldShare>& shares = b_shares[owners[k]];
      first[k] = RecoverFromFirstShares(shares, t, verify_b(owners[k]));
      // Freed here, on every thread, unless Recover still needs them.
      if (first[k].has_value()) std::vector<HeldShare>().swap(shares);
    });
    for (size_t k = 0; k < owners.size(); ++k) {
      if (first[k].has_value()) {
        unmasks.Add(*std::move(first[k]), crypto::MaskSign::kSubtract);
        continue;
      }
      const size_t i = owners[k];
      absl::StatusOr<crypto::SecretBytes> b = Recover(ctx, i, "b", b_shares[i], t, verify_b(i));
      if (!b.ok()) return AbortWith(ctx, b.status());
      unmasks.Add(*std::move(b), crypto::MaskSign::kSubtract);
    }
    // Dropped: recompute their pairwise masks with every surviving neighbour.
    for (size_t j = 0; j < n; ++j) {
      if (!dropped_[j]) continue;
      if (ctx.session != nullptr) {
        if (absl::Status s = UnmaskDroppedInSession(ctx, j, s_shares[j], t, unmasks); !s.ok()) {
          return AbortWith(ctx, s);
        }
        continue;
      }
      std::optional<crypto::X25519PrivateKey> key;
      const auto verify = [&](const crypto::SecretBytes& sk) {
        absl::StatusOr<crypto::X25519PrivateKey> k = crypto::X25519PrivateKey::FromBytes(sk.span());
        if (!k.ok() || k->public_key() != ctx.s_pk[j]) return false;
        key = std::move(*k);
        return true;
      };
      absl::StatusOr<crypto::SecretBytes> sk = Recover(ctx, j, "s_sk", s_shares[j], t, verify);
      if (!sk.ok()) return AbortWith(ctx, sk.status());
      const DeviceId dj = ctx.config.roster[j];
      for (size_t i : ctx.NeighboursIn(j, eligible_)) {
        const DeviceId di = ctx.config.roster[i];
        absl::StatusOr<crypto::SecretBytes> seed =
            DeriveMaskSeed(*key, ctx.s_pk[i], ctx.config.aggregation_id, di, dj);
        if (!seed.ok()) return AbortWith(ctx, seed.status());
        // y_i carries +PRG(s_ij) if j < i, −PRG(s_ij) otherwise: undo it.
        unmasks.Add(*std::move(seed),
                    dj < di ? crypto::MaskSign::kSubtract : crypto::MaskSign::kAdd);
      }
    }
    if (absl::Status s = unmasks.ApplyTo(bits, ctx.sum, ctx.threads); !s.ok()) {
      return AbortWith(ctx, s);
    }

    AggregationResult result;
    result.sum = std::move(ctx.sum);
    for (size_t i = 0; i < n; ++i) {
      if (eligible_[i]) result.included.push_back(ctx.config.roster[i]);
    }
    ctx.result = std::move(result);
    return ServerTransition{};
  }

 protected:
  absl::Status Accept(ServerContext& ctx, size_t index, const ClientMessage& message) override {
    const auto& m = std::get<UnmaskingResponse>(message);
    // What we asked `index` for: b-shares of itself and N(index) ∩ U3,
    // s_sk-shares of N(index) ∩ D.
    std::vector<size_t> want_b = {index}, want_s;
    ctx.graph.ForEachNeighbour(index, [&](size_t j) {
      if (eligible_[j]) want_b.push_back(j);
      if (dropped_[j]) want_s.push_back(j);
    });
    std::sort(want_b.begin(), want_b.end());
    ParsedResponse parsed;
    if (absl::Status s = ParseShares(ctx, index, m.b_shares, want_b, "b", parsed.b_shares);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ParseShares(ctx, index, m.s_sk_shares, want_s, "s_sk", parsed.s_sk_shares);
        !s.ok()) {
      return s;
    }
    responses_[index] = std::move(parsed);
    return absl::OkStatus();
  }
  void Discard(ServerContext&, size_t index) override { responses_[index].reset(); }

 private:
  // `want` sorted roster indices; the response must name exactly them, each
  // once, with shares at the x-coordinate the owner gave this holder.
  static absl::Status ParseShares(const ServerContext& ctx, size_t holder,
                                  const std::vector<RevealedShare>& got,
                                  const std::vector<size_t>& want, const char* what,
                                  std::vector<OwnedShare>& out) {
    if (got.size() != want.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(got.size(), " ", what, "-shares, expected ", want.size()));
    }
    for (const RevealedShare& rs : got) {
      const std::optional<size_t> owner = ctx.graph.IndexOf(rs.owner);
      if (!owner.has_value() || !std::binary_search(want.begin(), want.end(), *owner)) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, "-share of device ", rs.owner, ", which was not requested"));
      }
      absl::StatusOr<crypto::ShamirShare> share = ParseSecretShare(rs.share);
      if (!share.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, "-share of device ", rs.owner, ": ", share.status().message()));
      }
      if (share->x != ctx.HolderX(*owner, holder)) {
        return absl::InvalidArgumentError(absl::StrCat(what, "-share of device ", rs.owner,
                                                       " at x = ", share->x, ", expected ",
                                                       ctx.HolderX(*owner, holder)));
      }
      out.push_back({*owner, std::move(*share)});
    }
    std::sort(out.begin(), out.end(),
              [](const OwnedShare& a, const OwnedShare& b) { return a.owner < b.owner; });
    for (size_t k = 1; k < out.size(); ++k) {
      if (out[k].owner == out[k - 1].owner) {
        return absl::InvalidArgumentError(absl::StrCat("two ", what, "-shares of one device"));
      }
    }
    return absl::OkStatus();
  }

  // Logs holders whose shares turned out inconsistent (their responses were
  // well-formed, so this is the only place a lie shows).
  absl::StatusOr<crypto::SecretBytes> Recover(ServerContext& ctx, size_t owner, const char* what,
                                              const std::vector<HeldShare>& shares, size_t t,
                                              const SecretVerifier& verify) {
    if (shares.size() < t) {
      return absl::AbortedError(absl::StrCat("only ", shares.size(), " ", what,
                                             "-shares of device ", ctx.config.roster[owner],
                                             " among the responders; threshold is ", t));
    }
    absl::StatusOr<RecoveredSecret> r = RecoverVerifiedSecret(shares, t, verify, ctx.rng);
    if (!r.ok()) {
      return absl::AbortedError(absl::StrCat("cannot recover ", what, " of device ",
                                             ctx.config.roster[owner], ": ", r.status().message()));
    }
    for (DeviceId liar : r->inconsistent_holders) {
      ctx.rejections.push_back(
          {liar, phase(),
           absl::DataLossError(absl::StrCat("revealed an inconsistent ", what, "-share of device ",
                                            ctx.config.roster[owner])),
           false});
    }
    return std::move(r->secret);
  }

  // A session round (session.h): recover e_j from its shares, open j's pads
  // to the round seeds m_ij of its surviving neighbours, and undo those
  // masks. The session's mask keys stay secret.
  absl::Status UnmaskDroppedInSession(ServerContext& ctx, size_t j,
                                      const std::vector<HeldShare>& shares, size_t t,
                                      Unmasks& unmasks) {
    const uint64_t agg = ctx.config.aggregation_id;
    const DeviceId dj = ctx.config.roster[j];
    const auto verify = [&](const crypto::SecretBytes& e) {
      absl::StatusOr<std::vector<uint8_t>> c = CommitRecoveryKey(e.span(), agg, dj);
      return c.ok() && crypto::ConstantTimeEquals(*c, ctx.recovery_commitment[j]);
    };
    ASSIGN_OR_RETURN(crypto::SecretBytes e, Recover(ctx, j, "e", shares, t, verify));
    const std::vector<MaskPad>& pads = ctx.mask_pads[j];
    for (size_t i : ctx.NeighboursIn(j, eligible_)) {
      const DeviceId di = ctx.config.roster[i];
      const auto pad = std::lower_bound(pads.begin(), pads.end(), di,
                                        [](const MaskPad& p, DeviceId d) { return p.peer < d; });
      if (pad == pads.end() || pad->peer != di) {  // Accept checked every live neighbour has one
        return absl::InternalError(absl::StrCat("no mask pad of ", dj, " for ", di));
      }
      ASSIGN_OR_RETURN(crypto::SecretBytes key, DeriveRecoveryPad(e.span(), agg, dj, di));
      unmasks.Add(XorSecret(pad->pad, key.span()),
                  dj < di ? crypto::MaskSign::kSubtract : crypto::MaskSign::kAdd);
    }
    return absl::OkStatus();
  }

  DeviceSet dropped_;  // D = U2 \ U3
  std::vector<std::optional<ParsedResponse>> responses_;
};

}  // namespace

std::unique_ptr<ServerPhase> MakeUnmaskingPhase(DeviceSet u3, DeviceSet dropped,
                                                DeviceSet not_asked) {
  return std::make_unique<Unmasking>(std::move(u3), std::move(dropped), std::move(not_asked));
}

}  // namespace fedmf::secagg::internal
