#include "common/psi/internal/multiply.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/parallel_for.h"
#include "common/base/status_macros.h"

namespace fedmf::psi::internal {
namespace {

// Fewer points than this per thread are not worth a thread.
constexpr size_t kMinChunk = 256;

}  // namespace

absl::StatusOr<std::vector<crypto::RistrettoPoint>> MultiplyAll(
    const crypto::RistrettoScalar& scalar, const std::vector<crypto::RistrettoPoint>& points,
    int threads) {
  std::vector<crypto::RistrettoPoint> out(points.size());
  absl::Status s =
      base::ParallelChunks(points.size(), threads, kMinChunk, 1, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          auto p = scalar.Multiply(points[i]);
          if (!p.ok()) {
            return absl::InvalidArgumentError(
                absl::StrCat("element ", i, " of the list: ", p.status().message()));
          }
          out[i] = *p;
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<crypto::RistrettoPoint>> HashAndMultiply(
    const crypto::RistrettoScalar& scalar, std::string_view domain,
    const std::vector<std::string>& ids, int threads) {
  std::vector<crypto::RistrettoPoint> out(ids.size());
  absl::Status s =
      base::ParallelChunks(ids.size(), threads, kMinChunk, 1, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          ASSIGN_OR_RETURN(auto h, crypto::HashToRistretto(domain, ids[i]));
          ASSIGN_OR_RETURN(auto p, scalar.Multiply(h));
          out[i] = p;
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return out;
}

}  // namespace fedmf::psi::internal
