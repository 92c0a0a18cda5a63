#include "common/secagg/secret_recovery.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"

namespace fedmf::secagg {
namespace {

std::optional<crypto::SecretBytes> TrySubset(std::span<const HeldShare> shares,
                                             std::span<const size_t> subset, size_t threshold,
                                             const SecretVerifier& verify) {
  std::vector<crypto::ShamirShare> picked;
  picked.reserve(subset.size());
  for (size_t i : subset) picked.push_back(shares[i].share);
  absl::StatusOr<crypto::SecretBytes> secret = crypto::ShamirReconstruct(picked, threshold);
  if (!secret.ok() || !verify(*secret)) return std::nullopt;
  return std::move(*secret);
}

}  // namespace

std::optional<crypto::SecretBytes> RecoverFromFirstShares(std::span<const HeldShare> shares,
                                                          size_t threshold,
                                                          const SecretVerifier& verify) {
  if (threshold == 0 || shares.size() < threshold) return std::nullopt;
  std::vector<size_t> first(threshold);
  std::iota(first.begin(), first.end(), size_t{0});
  return TrySubset(shares, first, threshold, verify);
}

absl::StatusOr<RecoveredSecret> RecoverVerifiedSecret(std::span<const HeldShare> shares,
                                                      size_t threshold,
                                                      const SecretVerifier& verify,
                                                      random::Csprng& rng, int max_attempts) {
  if (threshold == 0 || shares.size() < threshold) {
    return absl::FailedPreconditionError(
        absl::StrCat(shares.size(), " shares, threshold ", threshold));
  }
  if (std::optional<crypto::SecretBytes> s = RecoverFromFirstShares(shares, threshold, verify)) {
    return RecoveredSecret{std::move(*s), {}};  // the usual case: nobody lied
  }
  std::vector<size_t> order(shares.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const std::span<const size_t> first(order.data(), threshold);
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    for (size_t i = 0; i < threshold; ++i) {  // partial Fisher–Yates
      std::swap(order[i], order[i + rng.UniformInt(order.size() - i)]);
    }
    std::optional<crypto::SecretBytes> s = TrySubset(shares, first, threshold, verify);
    if (!s.has_value()) continue;
    // t-1 verified shares plus one candidate determine the polynomial: the
    // candidate is consistent iff that polynomial still yields the secret.
    RecoveredSecret out{std::move(*s), {}};
    std::vector<size_t> probe(order.begin(), order.begin() + static_cast<long>(threshold));
    for (size_t c = threshold; c < order.size(); ++c) {
      probe.back() = order[c];
      const auto same = [&](const crypto::SecretBytes& x) { return x == out.secret; };
      if (!TrySubset(shares, probe, threshold, same).has_value()) {
        out.inconsistent_holders.push_back(shares[order[c]].holder);
      }
    }
    std::sort(out.inconsistent_holders.begin(), out.inconsistent_holders.end());
    return out;
  }
  return absl::DataLossError(
      absl::StrCat("no ", threshold, "-subset of ", shares.size(), " shares verified"));
}

}  // namespace fedmf::secagg
