// Snapping noised releases to a grid, so that the set of values a party can
// release does not depend on its data (Mironov, "On significance of the least
// significant bits for differential privacy", CCS 2012, Section 5, adapted
// from Laplace to the Gaussian; the argument and its limits are in
// docs/privacy.md, section "Floating point").
//
// A floating-point "value + noise" can take only a value-dependent set of
// doubles; Mironov's attack tells neighbouring databases apart by which
// doubles occur. Rounding every released value to a multiple of a power of
// two Lambda that is far coarser than the floating-point resolution of the
// values (and of the noise) makes the output set the grid itself, the same
// for every database, and changes each grid point's probability only by the
// floating-point error of the computation relative to Lambda. Over the reals
// the rounding is a data-independent post-processing of the Gaussian
// mechanism: it costs no privacy, and Lambda is tiny next to the noise, so
// it costs no accuracy either.
#ifndef FEDMF_COMMON_DP_SNAPPING_H_
#define FEDMF_COMMON_DP_SNAPPING_H_

#include <cstddef>

namespace fedmf::dp {

// Lambda is at most noise_sd / 2^kSnapBitsBelowNoise ...
inline constexpr int kSnapBitsBelowNoise = 20;
// ... unless that is finer than 2^kSnapUlpsMargin units in the last place of
// the largest magnitude a released value can have: the floating-point error
// of the computation (a few ulps) must be a negligible fraction of a cell.
inline constexpr int kSnapUlpsMargin = 32;

// The grid for a release whose noise has standard deviation noise_sd > 0 and
// whose values satisfy |x| <= magnitude_bound (> 0), both public: the power
// of two max(2^(floor(log2 noise_sd) - kSnapBitsBelowNoise),
//             2^(floor(log2 magnitude_bound) - 52 + kSnapUlpsMargin)).
// Aborts on non-finite or non-positive arguments (a programming error).
double SnapGranularity(double noise_sd, double magnitude_bound);

// x rounded toward zero to a multiple of `granularity` (a power of two from
// SnapGranularity): exact in floating point, never increases |x|, keeps the
// sign (so a clipped, non-negative embedding stays feasible).
double SnapTowardZero(double x, double granularity);
void SnapTowardZero(double* x, size_t n, double granularity);

// For a release with no public bound on its magnitude (the FMF size release:
// a count whose only bound would be the party's own size): x rounded toward
// zero to a multiple of SnapGranularity(noise_sd, |x|), i.e. of the grid of
// x's own binade [2^k, 2^(k+1)), 2^(k - 52 + kSnapUlpsMargin), unless the
// noise's grid is coarser. Within a binade that grid is fixed and x stays in
// its binade, so the output is a number of one fixed floating-point format
// (52 - kSnapUlpsMargin = 20 fraction bits, exponents from the noise's grid
// up) whatever the data: the set of possible outputs is data-independent, as
// with a public bound, and the computation's error is 2^-kSnapUlpsMargin of a
// cell wherever x lands (docs/privacy.md, section floating-point). 0 stays 0.
double SnapInBinadeTowardZero(double x, double noise_sd);
void SnapInBinadeTowardZero(double* x, size_t n, double noise_sd);

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_SNAPPING_H_
