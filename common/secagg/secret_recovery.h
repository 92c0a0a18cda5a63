// Recovering a device's secret (b_i or s_sk_i) from the shares that
// unmasking responders revealed, robustly: a candidate is only accepted if
// `verify` confirms it (b_i against its commitment, s_sk_i against s_pk_i),
// so a holder lying about its share cannot make the server unmask with a
// wrong secret and corrupt the sum. If the first t shares do not verify,
// random t-subsets are tried; once one verifies, every other share is tested
// against it and the holders of shares that disagree are reported.
#ifndef FEDMF_COMMON_SECAGG_SECRET_RECOVERY_H_
#define FEDMF_COMMON_SECAGG_SECRET_RECOVERY_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/secret_bytes.h"
#include "common/crypto/shamir.h"
#include "common/random/csprng.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg {

struct HeldShare {
  DeviceId holder = 0;
  crypto::ShamirShare share;
};

struct RecoveredSecret {
  crypto::SecretBytes secret;
  std::vector<DeviceId> inconsistent_holders;  // shares that are not on the polynomial
};

using SecretVerifier = std::function<bool(const crypto::SecretBytes&)>;

// The secret of the first `threshold` shares if it verifies, the usual case
// (nobody lied); nullopt otherwise or with fewer shares. Uses no randomness,
// so callers may run it for many owners at once and fall back to
// RecoverVerifiedSecret, in owner order, only where it fails.
std::optional<crypto::SecretBytes> RecoverFromFirstShares(std::span<const HeldShare> shares,
                                                          size_t threshold,
                                                          const SecretVerifier& verify);

// RecoverFromFirstShares, then random threshold-subsets until one verifies,
// naming the holders whose shares are off that secret's polynomial.
// kFailedPrecondition with fewer than `threshold` shares; kDataLoss if no
// tried subset verifies.
absl::StatusOr<RecoveredSecret> RecoverVerifiedSecret(std::span<const HeldShare> shares,
                                                      size_t threshold,
                                                      const SecretVerifier& verify,
                                                      random::Csprng& rng, int max_attempts = 32);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_SECRET_RECOVERY_H_
