// One step of Algorithm 1 with Poisson-subsampled mini-batches (DP-SGD)
// instead of one sample per step:
//  - a data owner samples each of its ratings with probability q,
//    sums their clipped gradients (lines 7-8) and adds N(0, (z C)^2) to
//    EVERY coordinate of U, V, S and W (line 9): which rows a step touches
//    depends on which ratings exist, so noise on the touched rows only (as the
//    paper does) would reveal them;
//  - the parameter server A adds the owners' noisy sums and every owner
//    applies the same descent (lines 12-15) to the sum: with a per-sample
//    learning rate alpha, an epoch (1/q steps) moves the model as one pass of
//    per-sample SGD would in expectation, whatever q is.
// Under add/remove-one-rating neighbours the noisy sum of one owner is the
// Poisson-subsampled Gaussian mechanism with sensitivity C and noise
// multiplier z (docs/privacy.md, section coupling).
#ifndef FEDMF_COMMON_COUPLING_DP_STEP_H_
#define FEDMF_COMMON_COUPLING_DP_STEP_H_

#include <cstdint>
#include <span>
#include <vector>

#include "common/coupling/gradient.h"
#include "common/coupling/model.h"
#include "common/data/ratings.h"
#include "common/random/csprng.h"

namespace fedmf::coupling {

// A dense gradient over every parameter, shaped like the model.
struct GradientSum {
  mf::Matrix u, v, s, wt;

  static GradientSum ZerosLike(const CouplingModel& model);
  void SetZero();
  GradientSum& operator+=(const GradientSum& other);
  // l2 distance over all four blocks (the sensitivity tests use it).
  double DistanceTo(const GradientSum& other) const;
};

// Ratings sampled independently with probability q (Poisson).
std::vector<data::Rating> PoissonSampleRatings(const std::vector<data::Rating>& ratings, double q,
                                               random::Csprng& rng);

// Adds the clipped gradient of every rating in `batch` to `sum` (lines 7-8).
// `terms` = ComputeCouplingTerms(model): every gradient of a step is taken at
// the step's starting model. Returns how many samples were clipped.
int64_t AddClippedGradients(const CouplingModel& model, const CouplingTerms& terms,
                            std::span<const data::Rating> batch, double zeta, double clip,
                            GradientSum* sum);

// Line 9: i.i.d. N(0, stddev^2) on every coordinate of `sum` (stddev = z C).
void AddGaussianNoise(double stddev, random::Csprng& rng, GradientSum* sum);

// Lines 13-15 on the step's total over all owners:
//   theta <- theta - learning_rate * total,
// then S and W clamped to [-coupling_bound, coupling_bound] (Theorem 1
// assumes |S_ij|, |W_ij| <= 1). Post-processing of released sums only.
void ApplyStep(const GradientSum& total, double learning_rate, double coupling_bound,
               CouplingModel* model);

}  // namespace fedmf::coupling

#endif  // FEDMF_COMMON_COUPLING_DP_STEP_H_
