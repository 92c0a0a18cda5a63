// Internal: the random draws behind the synthetic generator, all from a
// Csprng (common/data sits below common/dp, so it has its own small samplers;
// they need to be reproducible, not fast).
#ifndef FEDMF_COMMON_DATA_INTERNAL_SYNTHETIC_SAMPLING_H_
#define FEDMF_COMMON_DATA_INTERNAL_SYNTHETIC_SAMPLING_H_

#include <cstdint>
#include <vector>

#include "common/random/csprng.h"

namespace fedmf::data::internal {

// Standard normal (Box-Muller).
double SampleNormal(random::Csprng& rng);
// Gamma(shape, 1), shape > 0 (Marsaglia-Tsang, with the U^(1/shape) boost
// for shape < 1).
double SampleGamma(random::Csprng& rng, double shape);
// Beta(alpha, beta), both > 0.
double SampleBeta(random::Csprng& rng, double alpha, double beta);
// Symmetric Dirichlet(alpha) into out[0..k): non-negative, sums to 1.
void SampleDirichlet(random::Csprng& rng, double alpha, double* out, int32_t k);

// Exactly `count` distinct (user, item) pairs, encoded user * m + item and
// sorted, such that every user in [0, n) and item in [0, m) appears.
// Requires max(n, m) <= count <= n * m. Cost is O(count) in time and memory:
// sparse targets use rejection sampling, dense ones sample the complement.
std::vector<uint64_t> SampleCoveringPairs(int32_t n, int32_t m, int64_t count, random::Csprng& rng);
// The same pairs (same draws from `rng`) as 32-bit keys, in half the memory;
// requires n * m <= 2^32 (aborts otherwise: callers choose by that test).
std::vector<uint32_t> SampleCoveringPairs32(int32_t n, int32_t m, int64_t count,
                                            random::Csprng& rng);

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_SYNTHETIC_SAMPLING_H_
