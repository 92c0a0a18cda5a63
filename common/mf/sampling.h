// Random trimming (per-user sensitivity) and Poisson user sampling.
#ifndef FEDMF_COMMON_MF_SAMPLING_H_
#define FEDMF_COMMON_MF_SAMPLING_H_

#include <cstdint>
#include <vector>

#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::mf {

// Keeps at most `theta` ratings per user, chosen uniformly at random
// (theta >= 1, aborts otherwise). Users with <= theta ratings are kept whole;
// survivors keep their original order. Draws randomness only for users with
// more than theta ratings.
RatingMatrix RandomTrim(const RatingMatrix& x, int32_t theta, random::Csprng& rng);

// Each of the n rows independently with probability q (Poisson sampling, the
// mechanism the RDP accountant analyses). Sorted ascending. q <= 0 (or NaN)
// gives none, q >= 1 all. For small q the gaps between selected rows are drawn
// as geometric variables (same distribution, ~q*n draws instead of n).
std::vector<int32_t> PoissonSampleRows(int32_t n, double q, random::Csprng& rng);

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_SAMPLING_H_
