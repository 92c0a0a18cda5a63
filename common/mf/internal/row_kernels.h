// Internal to common/mf: per-row kernels with the embedding dimension as a
// template parameter. The hot loops (per-rating SGD, gradient accumulation,
// clipping) touch one or two rows of p doubles at a time; with p known at
// compile time Eigen fully unrolls and vectorizes them, which is several times
// faster than the dynamic-size path at p = 20. DispatchDim picks a fixed-size
// instantiation for the common dimensions and falls back to Eigen::Dynamic.
#ifndef FEDMF_COMMON_MF_INTERNAL_ROW_KERNELS_H_
#define FEDMF_COMMON_MF_INTERNAL_ROW_KERNELS_H_

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace fedmf::mf::internal {

template <int P>
using RowVec = Eigen::Matrix<double, 1, P>;
template <int P>
using RowMap = Eigen::Map<RowVec<P>>;
template <int P>
using ConstRowMap = Eigen::Map<const RowVec<P>>;

template <int P>
using DimTag = std::integral_constant<int, P>;

// Calls f(DimTag<P>{}) with P = dim for dims we specialise, else P = Dynamic.
// Every instantiation must take the runtime `dim` too (Map(ptr, dim) is valid
// for fixed sizes when dim == P).
template <typename F>
decltype(auto) DispatchDim(int32_t dim, F&& f) {
  switch (dim) {
    case 10: return f(DimTag<10>{});
    case 16: return f(DimTag<16>{});
    case 20: return f(DimTag<20>{});
    case 32: return f(DimTag<32>{});
    case 50: return f(DimTag<50>{});
    default: return f(DimTag<Eigen::Dynamic>{});
  }
}

// Pi on one row: negatives -> 0, then scale to norm sqrt(R) if above it.
// Comparing squared norms avoids a sqrt for rows already inside the ball (the
// common case late in training); sqrt is monotone, so "ss <= R" implies the
// computed norm is <= sqrt(R) and such rows are left bit-for-bit untouched.
// The second half of Pi, for a row that is already non-negative. Split out so
// the SGD loop can fuse "update, then zero the negatives" into one pass.
template <int P>
inline void ScaleIntoBall(RowMap<P>& r, double rating_max, double sqrt_rating_max) {
  const double ss = r.squaredNorm();
  if (ss > rating_max) r *= sqrt_rating_max / std::sqrt(ss);
}

template <int P>
inline void ClipRowKernel(double* row, int32_t dim, double rating_max, double sqrt_rating_max) {
  RowMap<P> r(row, dim);
  r = r.cwiseMax(0.0);
  ScaleIntoBall<P>(r, rating_max, sqrt_rating_max);
}

}  // namespace fedmf::mf::internal

#endif  // FEDMF_COMMON_MF_INTERNAL_ROW_KERNELS_H_
