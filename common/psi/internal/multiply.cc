#include "common/psi/internal/multiply.h"

#include <algorithm>
#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::psi::internal {
namespace {

// Runs body(begin, end) over [0, n) in up to `threads` contiguous chunks and
// returns the first error by chunk order (deterministic).
absl::Status ParallelChunks(size_t n, int threads,
                            const std::function<absl::Status(size_t, size_t)>& body) {
  const size_t workers = std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1,
                                            std::max<size_t>(n / 256, 1));
  if (workers == 1) return body(0, n);
  std::vector<absl::Status> status(workers);
  std::vector<std::thread> pool;
  const size_t chunk = (n + workers - 1) / workers;
  for (size_t w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      const size_t begin = std::min(n, w * chunk);
      status[w] = body(begin, std::min(n, begin + chunk));
    });
  }
  for (std::thread& t : pool) t.join();
  for (absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<crypto::RistrettoPoint>> MultiplyAll(
    const crypto::RistrettoScalar& scalar, const std::vector<crypto::RistrettoPoint>& points,
    int threads) {
  std::vector<crypto::RistrettoPoint> out(points.size());
  absl::Status s = ParallelChunks(points.size(), threads, [&](size_t begin, size_t end) {
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
  absl::Status s = ParallelChunks(ids.size(), threads, [&](size_t begin, size_t end) {
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
