// Gradient computation and update steps for MF with squared loss
// L = sum (x_ij - <u_i, v_j>)^2.
#ifndef FEDMF_COMMON_MF_SGD_H_
#define FEDMF_COMMON_MF_SGD_H_

#include <cstdint>
#include <vector>

#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::mf {

// Adds to grad_u / grad_v (either may be null; when non-null they must be
// sized like U / V) the gradient of sum over users in `users`, over their
// ratings, of (x - <u,v>)^2:  d/du_i = -2 e v_j,  d/dv_j = -2 e u_i.
void AccumulateGradients(const RatingMatrix& x, const std::vector<int32_t>& users, const Matrix& u,
                         const Matrix& v, Matrix* grad_u, Matrix* grad_v);

// As above over the ratings at `positions` instead of whole users: indices
// into x's entries in row order (user 0's ratings first, each row as stored),
// ascending and each < x.nnz() (aborts otherwise). Per-rating DP steps sample
// ratings, not users (docs/privacy.md, section sampling).
void AccumulateRatingGradients(const RatingMatrix& x, const std::vector<int32_t>& positions,
                               const Matrix& u, const Matrix& v, Matrix* grad_u, Matrix* grad_v);

// The V half of the above with per-user clipping (DP-SGD's per-example
// clipping, the example being a user): each user's whole contribution, the
// rows -2 e_ij u_i over its ratings, is scaled by min(1, clip_norm / its
// Frobenius norm) before it is added to grad_v. Every row of that
// contribution is a multiple of u_i, so its norm is ||u_i|| * ||c|| with c_j
// the summed -2 e_ij over the user's ratings of item j (duplicate ratings of
// one item are merged before the norm is taken). clip_norm must be > 0;
// grad_v must be sized like V.
void AccumulateUserClippedVGradient(const RatingMatrix& x, const std::vector<int32_t>& users,
                                    const Matrix& u, const Matrix& v, double clip_norm,
                                    Matrix& grad_v);

// One private mini-batch step on one matrix:
//   M <- Snap(Pi(M - lr * (grad + N(0, sigma^2) on EVERY entry) / normalizer)),
// Snap = dp::SnapTowardZero on the grid dp::SnapGranularity(lr sigma /
// normalizer, sqrt(R)) when sigma > 0 (the floating-point defence, see
// common/dp/snapping.h); no snapping when sigma == 0.
// sigma == 0 means no noise (and no randomness is consumed). `normalizer` is
// the expected batch size (public), > 0. rating_max must be > 0: a DP step is
// always projected (aborts otherwise; use a huge R to make Pi a no-op in tests).
// Noise is drawn entry by entry in row-major order, in chunks, from `rng`.
void NoisyGradientStep(Matrix& m, const Matrix& grad, double sigma, double normalizer, double lr,
                       double rating_max, random::Csprng& rng);

struct SgdOptions {
  double learning_rate = 0.01;
  double l2 = 0.0;  // ridge on the touched rows
  bool update_u = true;
  bool update_v = true;
  double rating_max = 5.0;  // clipping bound R; <= 0 disables clipping
  // Cores for the epoch (>= 1). With P > 1 threads the epoch is blocked
  // (stratified SGD, as LIBMF and DSGD do): ratings fall into P x P blocks by
  // (user mod P, item mod P), and in each of P sub-epochs thread t runs block
  // (t, (t + s) mod P); blocks run together touch disjoint rows of U and of V,
  // so there is no race and the result is deterministic for a given P — but
  // not equal to the P = 1 order. Small epochs (< kMinRatingsPerThread per
  // thread) run sequentially.
  int32_t threads = 1;
};

inline constexpr int64_t kMinRatingsPerThread = 20000;

// One non-private epoch of classic per-rating SGD over `ratings` in a random
// order (projected: the two touched rows are clipped after each update).
// Returns the training MSE seen during the epoch.
//
// Precisely: the ratings are visited in the order std::shuffle(rng) puts them
// in; for each, e = x - <u_i, v_j> (added to the returned mean of e^2) and
//   u_i += lr (2 e v_j - l2 u_i),   v_j += lr (2 e u_i_old - l2 v_j)
// (v_j's step uses u_i from before this rating), each only if enabled, then
// the updated rows are clipped with Pi when rating_max > 0. Indices must be in
// range of U / V (aborts otherwise). Empty `ratings` returns 0. With
// options.threads = P > 1 (and enough ratings): each block in its own random
// order, the blocks in the schedule above.
double SgdEpoch(const std::vector<data::Rating>& ratings, Matrix& u, Matrix& v,
                const SgdOptions& options, random::Csprng& rng);

// SgdEpoch over ratings the caller lets it reorder. With one thread it
// shuffles `ratings` themselves (the swaps std::shuffle(rng) makes) and visits
// them in that order: no 4-byte order per rating beside them (19 MB at 4.8M
// ratings, a sixth of central training's peak) and a sequential read instead
// of a gather. The ratings come back in the epoch's order, the same multiset.
// The first epoch from a given order is SgdEpoch's to the bit (same updates,
// same returned MSE); the next one shuffles from that order, not from the
// caller's, so later epochs are a different (as random) order than SgdEpoch's.
// With options.threads = P > 1 (and enough ratings) it is SgdEpoch's blocked
// epoch and leaves `ratings` as they were.
double SgdEpochReordering(std::vector<data::Rating>& ratings, Matrix& u, Matrix& v,
                          const SgdOptions& options, random::Csprng& rng);

// Linear decay from `initial` to `initial * final_ratio` over the first
// `decay_fraction` of `total_steps`, constant afterwards (FMF paper Section 4.3).
class LearningRateSchedule {
 public:
  LearningRateSchedule(double initial, double final_ratio, int64_t total_steps,
                       double decay_fraction = 0.8);
  // step in [0, total_steps). Exactly: with D = decay_fraction * total_steps,
  // At(t) = initial + (final - initial) * min(t / D, 1), so At(0) = initial and
  // At(t) = initial * final_ratio for t >= D (t < 0 is treated as 0; D <= 0
  // gives the final rate everywhere). decay_fraction is clamped to [0, 1].
  double At(int64_t step) const;

 private:
  double initial_;
  double final_ratio_;
  int64_t total_steps_;
  double decay_fraction_;
};

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_SGD_H_
