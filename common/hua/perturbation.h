// The noise of Hua et al. section 4: objective perturbation (Theorem 1,
// Lemma 1), its decomposition into per-user pieces (Theorem 2), and the
// per-iteration noise against the difference attack.
//
// Every sampler takes its randomness from a Csprng (common/dp/noise.h on top);
// scale 0 (eps = inf) gives exact zeros.
#ifndef FEDMF_COMMON_HUA_PERTURBATION_H_
#define FEDMF_COMMON_HUA_PERTURBATION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "common/hua/params.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

// H_j: d i.i.d. Exponential(1) entries, drawn by the recommender.
std::vector<double> ExponentialVector(random::Csprng& rng, int32_t dim);

// One user's piece of a Laplace vector (Theorem 2, eq. 12):
//   piece[l] = b * sqrt(2 H[l]) * z[l] / sqrt(k),
// with z[l] ~ N(0, 1) drawn by the user (so C = z / sqrt(k) ~ N(0, 1/k)).
// Given H, k such pieces sum to b sqrt(2H) N(0, 1) per coordinate, which is
// Laplace(0, b) once H ~ Exp(1) is integrated out. `z` is passed in (not drawn
// here) so a user can draw a whole block once and stay deterministic when the
// set of requested items changes (see user.cc).
std::vector<double> LaplacePiece(std::span<const double> h, std::span<const double> z, int32_t k,
                                 double b);

// S1's eta_j: Theorem 1 (gamma-norm, scale 2 Delta / eps) or Lemma 1
// (i.i.d. Laplace(0, 2 Delta sqrt(d) / eps)).
std::vector<double> SampleObjectiveNoise(random::Csprng& rng, ObjectiveNoise kind, int32_t dim,
                                         double epsilon, const data::RatingRange& range);

// S2 without the third party: rho with density ∝ exp(-eps ||rho|| / (2 Delta)),
// so one user's released gradient (L2 sensitivity 2 Delta, since ||u|| <= 1)
// is eps-DP on its own.
std::vector<double> DifferenceAttackNoise(random::Csprng& rng, int32_t dim, double epsilon,
                                          const data::RatingRange& range);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_PERTURBATION_H_
