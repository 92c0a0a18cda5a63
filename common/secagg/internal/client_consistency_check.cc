#include "common/secagg/internal/client_consistency_check.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/secagg/internal/client_r3_unmasking.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg::internal {
namespace {

using crypto::ShamirShare;

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
    return ClientTransition{MakeUnmaskingPhase(std::move(held_), own_b_share_, std::move(*u3)),
                            ClientMessage(std::move(out))};
  }

 private:
  std::vector<HeldShares> held_;  // sorted by owner
  ShamirShare own_b_share_;
};

}  // namespace

std::unique_ptr<ClientPhase> MakeConsistencyCheckPhase(std::vector<HeldShares> held,
                                                       crypto::ShamirShare own_b_share) {
  return std::make_unique<ConsistencyCheckPhase>(std::move(held), std::move(own_b_share));
}

}  // namespace fedmf::secagg::internal
