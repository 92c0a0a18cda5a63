// The centralized computations: the non-private MF baseline ("the original MF
// scheme without any protection running 100 iterations") and S1, the trusted
// recommender.
#ifndef FEDMF_COMMON_HUA_CENTRAL_H_
#define FEDMF_COMMON_HUA_CENTRAL_H_

#include <cstdint>
#include <vector>

#include "common/data/ratings.h"
#include "common/hua/params.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

struct Profiles {
  mf::Matrix u;  // users x d
  mf::Matrix v;  // items x d
  // The valid variant's per-user offset b_i (the user's mean rating, kept on
  // her side): the prediction is b_i + u_i^T v_j. Empty: none (the paper's).
  std::vector<double> bias;
};

// U and V with the bias folded in as one more column (u_i | b_i, v_j | 1), so
// mf::Evaluate and ComputeErrorCdf see b_i + u_i^T v_j. Unchanged without bias.
Profiles FoldBias(const Profiles& p);

// Every user's mean training rating (the midpoint of `range` for a user
// without ratings): the "user mean only" predictor, as profiles (d = 0 + bias).
Profiles UserMeans(const mf::RatingMatrix& by_user, const data::RatingRange& range);

// U(0), V(0) drawn from the same streams the protocol's roles use (user i
// from UserStream(root, i), items from RecommenderStream(root)), so the
// baseline and S2 start from the same point.
Profiles InitialProfiles(const random::Csprng& root, int32_t users, int32_t items, int32_t dim);

// p.baseline_iterations simultaneous gradient steps on U and V, no noise
// (model.h).
Profiles TrainNonPrivate(const mf::RatingMatrix& by_user, Profiles start, const HuaParams& p);

// S1: with U fixed (learned non-privately and kept secret by the trusted
// recommender), p.iterations gradient steps on
//   sum (r_ij - u_i^T v_j)^2 + mu sum ||v_j||^2 + sum eta_j^T v_j
// from the data-independent v0, with eta_j drawn once per item from `rng`
// (p.s1_noise: Theorem 1 or Lemma 1). Only V is published.
mf::Matrix TrainTrustedItems(const mf::RatingMatrix& by_user, const mf::Matrix& u, mf::Matrix v0,
                             const HuaParams& p, const data::RatingRange& range,
                             random::Csprng& rng);

// S1, the valid variant: U is data-independent (`u`, e.g. U(0): rows of norm
// <= 1), and V is the EXACT minimiser of the perturbed objective, per item
//   (sum_i u_i u_i^T + mu' I) v_j = sum_i r_ij u_i - eta_j / 2,  mu' = max(mu, 1),
// eta_j drawn once per item (Theorem 1 gamma-norm, scale 2 Delta / eps, or
// Lemma 1). A rating's value change moves only sum_i r_ij u_i, by at most
// Delta ||u_i|| <= Delta, and v_j is an affine bijection of eta_j whose
// matrix does not depend on the values: V is eps-DP (pure) per rating.
// Items nobody rated keep their row of `v0`.
mf::Matrix TrainTrustedItemsExact(const mf::RatingMatrix& by_user, const mf::Matrix& u,
                                  mf::Matrix v0, const HuaParams& p, const data::RatingRange& range,
                                  random::Csprng& rng);

// Each user's own fit against a published V (never leaves the user, so it
// costs nothing): b_i her mean rating and u_i the ridge solution of
// (sum_j v_j v_j^T + 1000 I) u_i = sum_j (r_ij - b_i) v_j (central.cc says why).
Profiles FitUsersLocally(const mf::RatingMatrix& by_user, const mf::Matrix& v, const HuaParams& p,
                         const data::RatingRange& range);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_CENTRAL_H_
