#include "common/data/internal/synthetic_sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <numeric>

#include "absl/container/flat_hash_set.h"

namespace fedmf::data::internal {

double SampleNormal(random::Csprng& rng) {
  const double r = std::sqrt(-2.0 * std::log(rng.NextOpenDouble()));
  return r * std::cos(2.0 * std::numbers::pi * rng.NextDouble());
}

double SampleGamma(random::Csprng& rng, double shape) {
  if (shape < 1.0) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a).
    return SampleGamma(rng, shape + 1.0) * std::pow(rng.NextOpenDouble(), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = SampleNormal(rng);
    const double v0 = 1.0 + c * x;
    if (v0 <= 0.0) continue;
    const double v = v0 * v0 * v0;
    const double u = rng.NextOpenDouble();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

double SampleBeta(random::Csprng& rng, double alpha, double beta) {
  const double x = SampleGamma(rng, alpha);
  const double y = SampleGamma(rng, beta);
  // Both underflowing to 0 is possible only for tiny shapes; 1/2 is the
  // symmetric answer.
  return x + y > 0.0 ? x / (x + y) : 0.5;
}

void SampleDirichlet(random::Csprng& rng, double alpha, double* out, int32_t k) {
  double sum = 0.0;
  for (int32_t l = 0; l < k; ++l) sum += (out[l] = SampleGamma(rng, alpha));
  if (!(sum > 0.0)) {
    // Every draw underflowed (possible only for tiny alpha): the limit of the
    // distribution is a vertex of the simplex.
    std::fill(out, out + k, 0.0);
    out[rng.UniformInt(static_cast<uint64_t>(k))] = 1.0;
    return;
  }
  for (int32_t l = 0; l < k; ++l) out[l] /= sum;
}

namespace {

// Key: the pairs' and the hash sets' element type. uint32_t when every pair
// index fits (n * m <= 2^32, e.g. 70,000 x 10,000): half the memory, the same
// membership answers, so the same draws and the same pairs.
template <typename Key>
std::vector<Key> SampleCoveringPairsWith(int32_t n, int32_t m, int64_t count, random::Csprng& rng) {
  const uint64_t un = static_cast<uint64_t>(n), um = static_cast<uint64_t>(m);
  const uint64_t total = un * um;
  // Coverage first: zip a shuffled user list with a shuffled item list,
  // cycling the shorter one. For t < max(n, m) the longer side never repeats,
  // so these max(n, m) pairs are distinct and touch every user and item.
  std::vector<uint32_t> users(n), items(m);
  std::iota(users.begin(), users.end(), 0u);
  std::iota(items.begin(), items.end(), 0u);
  std::shuffle(users.begin(), users.end(), rng);
  std::shuffle(items.begin(), items.end(), rng);
  const uint64_t cover = std::max(un, um);
  absl::flat_hash_set<Key> chosen;
  std::vector<Key> out;
  out.reserve(static_cast<size_t>(count));
  for (uint64_t t = 0; t < cover; ++t) {
    const uint64_t key = users[t % un] * um + items[t % um];
    chosen.insert(static_cast<Key>(key));
    out.push_back(static_cast<Key>(key));
  }

  const uint64_t wanted = static_cast<uint64_t>(count) - cover;
  const uint64_t free_pairs = total - cover;
  if (wanted <= free_pairs / 2) {
    // Sparse: uniform draws without replacement by rejection; at most half
    // the free pairs get taken, so the expected draws per pair stay below 2.
    chosen.reserve(static_cast<size_t>(count));
    while (out.size() < static_cast<size_t>(count)) {
      const uint64_t key = rng.UniformInt(total);
      if (chosen.insert(static_cast<Key>(key)).second) out.push_back(static_cast<Key>(key));
    }
  } else {
    // Dense: draw the pairs to leave OUT instead, then take the rest in order.
    absl::flat_hash_set<Key> excluded;
    const uint64_t leave_out = free_pairs - wanted;
    excluded.reserve(static_cast<size_t>(leave_out));
    while (excluded.size() < leave_out) {
      const uint64_t key = rng.UniformInt(total);
      if (!chosen.contains(static_cast<Key>(key))) excluded.insert(static_cast<Key>(key));
    }
    for (uint64_t key = 0; key < total; ++key) {
      const Key k = static_cast<Key>(key);
      if (!chosen.contains(k) && !excluded.contains(k)) out.push_back(k);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<uint64_t> SampleCoveringPairs(int32_t n, int32_t m, int64_t count,
                                          random::Csprng& rng) {
  return SampleCoveringPairsWith<uint64_t>(n, m, count, rng);
}

std::vector<uint32_t> SampleCoveringPairs32(int32_t n, int32_t m, int64_t count,
                                            random::Csprng& rng) {
  if (static_cast<uint64_t>(n) * static_cast<uint64_t>(m) > (uint64_t{1} << 32)) {
    std::fprintf(stderr, "SampleCoveringPairs32: n * m = %lld exceeds 2^32\n",
                 static_cast<long long>(n) * m);
    std::abort();
  }
  return SampleCoveringPairsWith<uint32_t>(n, m, count, rng);
}

}  // namespace fedmf::data::internal
