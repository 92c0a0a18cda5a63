#include "common/mf/clipping.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/mf/internal/row_kernels.h"

namespace fedmf::mf {

void ClipEmbeddings(Matrix& m, double rating_max) {
  if (!(rating_max > 0)) {
    std::fprintf(stderr, "fedmf: ClipEmbeddings needs R > 0, got %g\n", rating_max);
    std::abort();
  }
  const int32_t dim = static_cast<int32_t>(m.cols());
  const Eigen::Index rows = m.rows();
  const double sqrt_r = std::sqrt(rating_max);
  double* data = m.data();
  internal::DispatchDim(dim, [&](auto tag) {
    constexpr int P = decltype(tag)::value;
    for (Eigen::Index i = 0; i < rows; ++i) {
      internal::ClipRowKernel<P>(data + i * dim, dim, rating_max, sqrt_r);
    }
  });
}

void ClipRow(double* row, int32_t dim, double rating_max) {
  if (!(rating_max > 0)) {
    std::fprintf(stderr, "fedmf: ClipRow needs R > 0, got %g\n", rating_max);
    std::abort();
  }
  // Same kernels as ClipEmbeddings, so both give bit-identical rows.
  const double sqrt_r = std::sqrt(rating_max);
  internal::DispatchDim(dim, [&](auto tag) {
    internal::ClipRowKernel<decltype(tag)::value>(row, dim, rating_max, sqrt_r);
  });
}

double SensitivityOneMatrix(double rating_max) {
  // ||-2 v (x - <u,v>)|| <= 2 * sqrt(R) * R: ||v|| <= sqrt(R) and, since
  // x, <u,v> both lie in [0, R], |x - <u,v>| <= R.
  return 2.0 * std::pow(rating_max, 1.5);
}

double SensitivityBothMatrices(double rating_max) {
  // The (U, V) gradient of one rating stacks two such vectors.
  return std::sqrt(2.0) * SensitivityOneMatrix(rating_max);
}

}  // namespace fedmf::mf
