// The centralized computations: the non-private MF baseline ("the original MF
// scheme without any protection running 100 iterations") and S1, the trusted
// recommender.
#ifndef FEDMF_COMMON_HUA_CENTRAL_H_
#define FEDMF_COMMON_HUA_CENTRAL_H_

#include <cstdint>

#include "common/data/ratings.h"
#include "common/hua/params.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

struct Profiles {
  mf::Matrix u;  // users x d
  mf::Matrix v;  // items x d
};

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

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_CENTRAL_H_
