// Noise samplers on top of Csprng.
//
// Gaussian: see noise.cc for the method and its floating-point caveat
// (Mironov 2012: textbook floating-point samplers leak through the set of
// representable outputs; we draw 53-bit uniforms from a CSPRNG and document
// the residual risk rather than claim exactness).
#ifndef FEDMF_COMMON_DP_NOISE_H_
#define FEDMF_COMMON_DP_NOISE_H_

#include <cstddef>
#include <vector>

#include "common/random/csprng.h"

namespace fedmf::dp {

using random::Csprng;

// Parameters: sigma, b and scale must be finite and >= 0 (0 gives exactly 0);
// lambda and shape must be finite and > 0; d >= 1. A violation is a
// programming error that would silently weaken privacy, so it aborts the
// process with a message (like Csprng's own failures) instead of returning
// a number.

// N(0, sigma^2).
double SampleGaussian(Csprng& rng, double sigma);
// Fills out[0..n) with i.i.d. N(0, sigma^2); the fast path for noising matrices.
void FillGaussian(Csprng& rng, double sigma, double* out, size_t n);
// Adds i.i.d. N(0, sigma^2) to out[0..n).
void AddGaussian(Csprng& rng, double sigma, double* out, size_t n);

// Laplace(0, b): density exp(-|x|/b) / (2b).
double SampleLaplace(Csprng& rng, double b);
// Exponential with rate lambda (mean 1/lambda).
double SampleExponential(Csprng& rng, double lambda);
// Gamma(shape k > 0, scale theta) (Marsaglia-Tsang).
double SampleGamma(Csprng& rng, double shape, double scale);

// A d-dimensional vector with density proportional to exp(-||x||_2 / scale):
// norm ~ Gamma(d, scale), direction uniform on the sphere. Hua et al.
// Theorem 1 uses scale = 2*Delta/epsilon.
std::vector<double> SampleGammaNormVector(Csprng& rng, int d, double scale);

}  // namespace fedmf::dp

#endif  // FEDMF_COMMON_DP_NOISE_H_
