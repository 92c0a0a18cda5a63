// The coupling model of "Differentially private collaborative coupling
// learning" (its equations (1)-(3); docs/privacy.md, section coupling): matrix
// factorization plus a user-user coupling S and an item-item coupling W,
//
//   R^_ij = r0 + U_i.V_j + (1/m) sum_a S_ia U_a.V_j + (1/n) sum_b W_bj U_i.V_b
//
// with m users, n items and rank d. S (m x m) and W (n x n) are dense: for
// MovieLens-100K (943 x 1682) that is 3.7M couplings (30 MB); for
// MovieLens-10M (71,567 users) S alone would be 41 GB, so the model refuses
// sizes above kMaxDenseCouplings (docs/privacy.md, section coupling, says what
// would scale: sparse top-k or low-rank couplings).
#ifndef FEDMF_COMMON_COUPLING_MODEL_H_
#define FEDMF_COMMON_COUPLING_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/mf/embeddings.h"
#include "common/mf/metrics.h"
#include "common/random/csprng.h"

namespace fedmf::coupling {

// m^2 + n^2 above this is refused (64M doubles = 512 MB per copy; training
// holds two copies: the model and the step's gradient sum).
inline constexpr int64_t kMaxDenseCouplings = int64_t{64} << 20;

struct CouplingModel {
  double offset = 0;  // r0, the global offset: public (the declared range's midpoint)
  mf::Matrix u;       // m x d, U_i is row i
  mf::Matrix v;       // n x d, V_j is row j
  mf::Matrix s;       // m x m, s(i, a) = S_ia
  // n x n, wt(j, b) = W_bj: W transposed, because a rating on item j touches
  // column j of W, which is then one contiguous row.
  mf::Matrix wt;

  int32_t num_users() const { return static_cast<int32_t>(u.rows()); }
  int32_t num_items() const { return static_cast<int32_t>(v.rows()); }
  int32_t dim() const { return static_cast<int32_t>(u.cols()); }
  // Every coordinate of U, V, S and W (what a dense noisy gradient covers).
  int64_t ParameterCount() const;
};

// U, V, S, W uniform in (-init_scale, init_scale) (the paper: 0.01), offset
// as given. InvalidArgument for m, n, d < 1, init_scale not in [0, 1] or a
// model over kMaxDenseCouplings.
absl::StatusOr<CouplingModel> InitialModel(int32_t num_users, int32_t num_items, int32_t dim,
                                           double offset, double init_scale, random::Csprng& rng);

// The coupling terms every prediction of a step shares, computed once:
// su_i = (1/m) sum_a S_ia U_a (m x d), wv_j = (1/n) sum_b W_bj V_b (n x d).
struct CouplingTerms {
  mf::Matrix su;
  mf::Matrix wv;
};
CouplingTerms ComputeCouplingTerms(const CouplingModel& model);

// R^_ij, unclamped (the training error uses it as is).
double Predict(const CouplingModel& model, const CouplingTerms& terms, int32_t user, int32_t item);

// MSE, RMSE and MAE of predictions clamped to `range` (ratings in global
// indices, each inside the model).
mf::ErrorMetrics Evaluate(const CouplingModel& model, const std::vector<data::Rating>& ratings,
                          const data::RatingRange& range);

}  // namespace fedmf::coupling

#endif  // FEDMF_COMMON_COUPLING_MODEL_H_
