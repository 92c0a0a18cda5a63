// The item matrix V of an LFL job as the server holds and broadcasts it: its
// seeded start and the step after each iteration's aggregate. One definition
// for fedmf-server's LFL job and the in-process simulator, so a seeded job
// and a simulation agree value for value.
#ifndef FEDMF_COMMON_LFL_ITEM_MATRIX_H_
#define FEDMF_COMMON_LFL_ITEM_MATRIX_H_

#include <cstdint>
#include <span>

#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::lfl {

// V(0): uniform entries scaled for mean 0.7 R, clipped (Pi), at float32
// precision (the precision every shared matrix is released at).
mf::Matrix InitialItemMatrix(int32_t num_items, int32_t dim, double rating_max,
                             random::Csprng& rng);

// V <- Pi(V - step * sum), rounded to float32. `sum` is the decoded
// aggregate, row-major, v.size() entries (checked by the caller).
void StepItemMatrix(mf::Matrix& v, std::span<const double> sum, double step, double rating_max);

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_ITEM_MATRIX_H_
