// Embedding clipping Pi (FMF paper Section 4.1.1): negative entries -> 0, then
// every row with L2 norm above sqrt(R) is scaled down to norm sqrt(R).
// This is the Euclidean projection onto {x >= 0, ||x|| <= sqrt(R)}.
#ifndef FEDMF_COMMON_MF_CLIPPING_H_
#define FEDMF_COMMON_MF_CLIPPING_H_

#include <cstdint>
#include <span>

#include "common/mf/embeddings.h"

namespace fedmf::mf {

// Clips every row of `m` in place. R > 0 is the top of the rating range
// (aborts otherwise). Rows already in the feasible set are left bit-for-bit
// unchanged; a scaled row has norm sqrt(R) up to one rounding (<= 1e-15 rel.).
void ClipEmbeddings(Matrix& m, double rating_max);
// Clips one row (a contiguous span of `dim` doubles) in place.
void ClipRow(double* row, int32_t dim, double rating_max);

// Sensitivities under clipping (FMF paper Section 4.1):
//   one embedding matrix:       2 * R^{3/2}
//   U and V in one step:        2 * sqrt(2) * R^{3/2}
double SensitivityOneMatrix(double rating_max);
double SensitivityBothMatrices(double rating_max);

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_CLIPPING_H_
