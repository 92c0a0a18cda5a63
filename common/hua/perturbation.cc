#include "common/hua/perturbation.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/dp/noise.h"

namespace fedmf::hua {

std::vector<double> ExponentialVector(random::Csprng& rng, int32_t dim) {
  std::vector<double> h(static_cast<size_t>(dim));
  for (double& x : h) x = dp::SampleExponential(rng, 1.0);
  return h;
}

std::vector<double> LaplacePiece(std::span<const double> h, std::span<const double> z, int32_t k,
                                 double b) {
  if (h.size() != z.size() || k < 1) {
    // A caller bug that would silently change the noise distribution.
    std::fprintf(stderr, "fedmf: LaplacePiece: |H| %zu, |z| %zu, k %d\n", h.size(), z.size(), k);
    std::abort();
  }
  std::vector<double> piece(h.size());
  const double c = b / std::sqrt(static_cast<double>(k));
  for (size_t l = 0; l < h.size(); ++l) piece[l] = c * std::sqrt(2.0 * h[l]) * z[l];
  return piece;
}

std::vector<double> SampleObjectiveNoise(random::Csprng& rng, ObjectiveNoise kind, int32_t dim,
                                         double epsilon, const data::RatingRange& range) {
  if (kind == ObjectiveNoise::kGammaNorm) {
    return dp::SampleGammaNormVector(rng, dim, GammaNormScale(epsilon, range));
  }
  const double b = LaplaceScale(epsilon, range, dim);
  std::vector<double> eta(static_cast<size_t>(dim));
  for (double& x : eta) x = dp::SampleLaplace(rng, b);
  return eta;
}

std::vector<double> DifferenceAttackNoise(random::Csprng& rng, int32_t dim, double epsilon,
                                          const data::RatingRange& range) {
  return dp::SampleGammaNormVector(rng, dim, GammaNormScale(epsilon, range));
}

}  // namespace fedmf::hua
