// Internal: one scalar times many points, split over threads (the output does
// not depend on the thread count). Every input point is checked.
#ifndef FEDMF_COMMON_PSI_INTERNAL_MULTIPLY_H_
#define FEDMF_COMMON_PSI_INTERNAL_MULTIPLY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/ristretto255.h"

namespace fedmf::psi::internal {

absl::StatusOr<std::vector<crypto::RistrettoPoint>> MultiplyAll(
    const crypto::RistrettoScalar& scalar, const std::vector<crypto::RistrettoPoint>& points,
    int threads);

// scalar * H(domain, id) for every id, in order.
absl::StatusOr<std::vector<crypto::RistrettoPoint>> HashAndMultiply(
    const crypto::RistrettoScalar& scalar, std::string_view domain,
    const std::vector<std::string>& ids, int threads);

}  // namespace fedmf::psi::internal

#endif  // FEDMF_COMMON_PSI_INTERNAL_MULTIPLY_H_
