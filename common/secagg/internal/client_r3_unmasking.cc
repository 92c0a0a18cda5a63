#include "common/secagg/internal/client_r3_unmasking.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/ed25519.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg::internal {
namespace {

using crypto::ShamirShare;

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

}  // namespace

std::unique_ptr<ClientPhase> MakeUnmaskingPhase(std::vector<HeldShares> held,
                                                crypto::ShamirShare own_b_share,
                                                std::optional<std::vector<DeviceId>> signed_u3) {
  return std::make_unique<UnmaskingPhase>(std::move(held), std::move(own_b_share),
                                          std::move(signed_u3));
}

}  // namespace fedmf::secagg::internal
