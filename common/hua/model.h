// The MF model of Hua et al. section 3.1 and its gradient-descent steps.
//
// The paper's update rules (2), (3), (9) are full-batch gradient descent on
//   J(U, V) = sum_{(i,j) in R} (r_ij - u_i^T v_j)^2 + lambda sum ||u_i||^2
//             + mu sum ||v_j||^2 + sum_j eta_j^T v_j
// (objective (6) times M), with every u_i projected onto ||u_i|| <= 1 (the
// sensitivity bound of Theorem 1). Taken literally with the summed gradient
// and gamma = 2^-5, an item with more than ~32 aligned raters diverges; so
// each row's step is divided by the number of ratings it sums over (n_i for
// a user, the number of contributors for an item). That is a diagonal
// preconditioner: the stationary points -- hence the privacy argument, which
// only looks at the minimizer -- are unchanged, and gamma stays the paper's.
// Both sides update simultaneously from the (t-1) values, as (2)-(3) say.
#ifndef FEDMF_COMMON_HUA_MODEL_H_
#define FEDMF_COMMON_HUA_MODEL_H_

#include <Eigen/Dense>
#include <cstdint>
#include <span>

#include "common/hua/params.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

// "U(0) and V(0) are composed of uniformly random norm 1 rows": entries
// uniform in [0, 1), scaled to norm 1 (non-negative, so <u, v> starts
// positive like the ratings).
void FillInitialProfile(random::Csprng& rng, std::span<double> row);

// u <- u * min(1, 1 / ||u||).
void ProjectUnitBall(std::span<double> u);
// x <- x * min(1, bound / ||x||): onto the ball ||x|| <= bound.
void ProjectBall(std::span<double> x, double bound);

// out += d/dv of (r - u^T v)^2 = -2 u (r - u^T v).
void AddItemGradient(std::span<const double> u, std::span<const double> v, double r,
                     std::span<double> out);
// out += d/du of (r - u^T v)^2 = -2 v (r - u^T v).
void AddUserGradient(std::span<const double> u, std::span<const double> v, double r,
                     std::span<double> out);

// u <- Proj(u - gamma / count * (grad + 2 lambda u)) onto ||u|| <= norm_bound
// (the paper: 1); no-op when count == 0.
void StepUser(std::span<double> u, std::span<const double> grad, int32_t count, const HuaParams& p,
              double norm_bound = 1.0);
// v <- v - gamma / count * (sum + 2 mu v), where `sum` is the (noisy) sum of
// `count` users' gradients; no-op when count == 0.
void StepItem(std::span<double> v, std::span<const double> sum, int32_t count, const HuaParams& p);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_MODEL_H_
