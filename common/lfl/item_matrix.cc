#include "common/lfl/item_matrix.h"

#include "common/mf/clipping.h"

namespace fedmf::lfl {

mf::Matrix InitialItemMatrix(int32_t num_items, int32_t dim, double rating_max,
                             random::Csprng& rng) {
  return mf::RoundedToFloat32(mf::RandomEmbeddings(
      num_items, dim, mf::InitScaleFor(0.7 * rating_max, dim), rating_max, rng));
}

void StepItemMatrix(mf::Matrix& v, std::span<const double> sum, double step, double rating_max) {
  for (int64_t k = 0; k < v.size(); ++k) v.data()[k] -= step * sum[static_cast<size_t>(k)];
  mf::ClipEmbeddings(v, rating_max);
  v = mf::RoundedToFloat32(v);
}

}  // namespace fedmf::lfl
