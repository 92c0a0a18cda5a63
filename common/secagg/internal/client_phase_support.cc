#include "common/secagg/internal/client_phase_support.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::secagg::internal {

using crypto::ShamirShare;

absl::Status Unexpected(const ServerMessage& message, ClientState state) {
  return absl::FailedPreconditionError(
      absl::StrCat("unexpected ", MessageName(message), " in state ", ClientStateName(state)));
}

bool Contains(const std::vector<DeviceId>& sorted, DeviceId id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

absl::StatusOr<std::vector<DeviceId>> SortedUnique(std::vector<DeviceId> ids, const char* what) {
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) {
    return absl::InvalidArgumentError(absl::StrCat("duplicate device in ", what));
  }
  return ids;
}

void Wipe(ShamirShare& s) {
  if (!s.y.empty()) OPENSSL_cleanse(s.y.data(), s.y.size());
}

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

absl::StatusOr<ClientTransition> ClientPhase::Start(ClientContext&) {
  return absl::FailedPreconditionError(absl::StrCat("Start() in state ", ClientStateName(state())));
}

}  // namespace fedmf::secagg::internal
