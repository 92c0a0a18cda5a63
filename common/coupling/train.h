// Training the coupling model over K data owners (Algorithm 1 with Poisson
// mini-batches; dp_step.h has one step). Pure: no clocks, no I/O, every
// random draw from forks of the caller's Csprng, so a seed fixes the run.
#ifndef FEDMF_COMMON_COUPLING_TRAIN_H_
#define FEDMF_COMMON_COUPLING_TRAIN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coupling/model.h"
#include "common/data/ratings.h"
#include "common/mf/metrics.h"
#include "common/random/csprng.h"

namespace fedmf::coupling {

// The paper's protocol holds out 20% of the ratings for testing (each of its
// 5 folds): `fedmf train` and `fedmf demo --setting coupling` split so.
inline constexpr double kPaperTestFraction = 0.2;

struct CouplingOptions {
  int32_t dim = 10;             // d
  int32_t epochs = 30;          // an epoch is ceil(1/q) steps
  double learning_rate = 0.01;  // alpha, per sample: the step is alpha times the noisy sum
  double zeta = 0.01;           // the regularization of (6)
  double clip = 1.0 / 6;        // C, the per-sample gradient norm bound (the paper: 1/6)
  // z: each owner adds N(0, (z C)^2) per coordinate per step; 0 = non-private.
  double noise_multiplier = 0;
  double sample_rate = 0.01;  // q, per rating per step
  double coupling_bound = 1;  // |S_ij|, |W_ij| <= this after every step (Theorem 1: 1)
  double init_scale = 0.01;   // U, V, S, W start uniform in (-init_scale, init_scale)
};

// InvalidArgument naming the field and its valid range.
absl::Status ValidateCouplingOptions(const CouplingOptions& options);

// InvalidArgument naming `what`, the rating's position and values unless
// every rating lies inside num_users x num_items x range.
absl::Status CheckCouplingRatings(const std::vector<data::Rating>& ratings, int32_t num_users,
                                  int32_t num_items, const data::RatingRange& range,
                                  const std::string& what);

// Steps in one epoch: ceil(1/q), so an epoch samples each rating once in
// expectation.
int64_t StepsPerEpoch(double sample_rate);

struct EpochReport {
  int32_t epoch = 0;            // 1-based
  int64_t steps = 0;            // so far
  mf::ErrorMetrics validation;  // empty (count 0) without validation ratings
  int64_t clipped = 0;          // samples clipped in this epoch (local diagnostics)
  int64_t sampled = 0;          // samples used in this epoch
};
using EpochFn = std::function<void(const EpochReport&)>;

struct CouplingRun {
  CouplingModel model;
  int64_t steps = 0;
  std::vector<EpochReport> epochs;
};

// Trains on `owners[k]` (owner k's training ratings, global indices inside
// num_users x num_items, values inside `range`). The offset r0 is the range's
// midpoint (public). `validation` (may be empty) is evaluated after every
// epoch; it must come from the training data, never the test set.
absl::StatusOr<CouplingRun> TrainCoupling(const std::vector<std::vector<data::Rating>>& owners,
                                          int32_t num_users, int32_t num_items,
                                          const data::RatingRange& range,
                                          const CouplingOptions& options,
                                          const std::vector<data::Rating>& validation,
                                          random::Csprng& rng, const EpochFn& on_epoch = {});

// Each owner's (epsilon, delta) per rating (add/remove one rating of that
// owner) after `steps` steps: the Poisson-subsampled Gaussian at (q, z) by
// the RDP accountant. +inf when z = 0.
absl::StatusOr<double> CouplingEpsilon(const CouplingOptions& options, int64_t steps, double delta);

}  // namespace fedmf::coupling

#endif  // FEDMF_COMMON_COUPLING_TRAIN_H_
