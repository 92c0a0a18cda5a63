// One DP local iteration of SGDMF (FMF paper Sections 4.1-5.1): Poisson-sample
// users, sum per-rating gradients over their ratings, add Gaussian noise to
// EVERY entry of each released matrix, normalize by the expected batch size,
// step, and clip (Pi).
#ifndef FEDMF_COMMON_FMF_DP_ITERATION_H_
#define FEDMF_COMMON_FMF_DP_ITERATION_H_

#include <cstdint>
#include <vector>

#include "common/data/ratings.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

struct DpIterationSpec {
  bool update_u = false;
  bool update_v = false;
  double sample_rate = 0.01;
  double sigma_u = 0;       // per-entry noise std-dev on the U gradient (0 = none)
  double sigma_v = 0;       // per-entry noise std-dev on the V gradient
  double v_step_scale = 1;  // VFL scales the V step by m_k/m
  double rating_max = 5;
  // > 0: HFL per-user clipping (JobConfig::clip_norm): V only, each sampled
  // user's whole V-gradient scaled to this L2 norm before it is summed.
  double user_clip = 0;
  // Expected number of ratings in a batch (eta * #ratings): a public constant,
  // as the expected batch size is in DP-SGD (Abadi et al. 2016).
  double normalizer = 1;
};

// Reusable gradient buffers, so a loop of iterations allocates once.
struct DpScratch {
  mf::Matrix grad_u;
  mf::Matrix grad_v;
};

// The pre-noise release of one DP iteration on `batch`: the summed per-rating
// gradients into scratch.grad_u / grad_v (those spec updates; both at the same
// U, V). RunDpIteration noises exactly these; the sensitivity tests measure them.
void ComputeDpGradients(const mf::RatingMatrix& x, const std::vector<int32_t>& batch,
                        const mf::Matrix& u, const mf::Matrix& v, const DpIterationSpec& spec,
                        DpScratch& scratch);

// The matrix the DP steps train on: every rating clamped into [0, R] (the
// sensitivities assume |x - <u,v>| <= R, and R comes with the job, i.e. from
// the server, so the data is made to fit rather than trusted to), then, for
// per-user privacy (theta > 0), each user trimmed to theta random ratings.
mf::RatingMatrix BuildDpTrainingMatrix(int32_t num_users, int32_t num_items,
                                       const std::vector<data::Rating>& ratings, double rating_max,
                                       int32_t theta, random::Csprng& rng);

void RunDpIteration(const mf::RatingMatrix& x, mf::Matrix& u, mf::Matrix& v,
                    const DpIterationSpec& spec, double learning_rate, random::Csprng& rng,
                    DpScratch& scratch);

// The public normalizer for a training matrix at rate eta (>= 1).
double ExpectedBatchRatings(const mf::RatingMatrix& x, double sample_rate);

// The default learning rate of a per-user-clipped HFL step (issue #16): each
// sampled user moves V by s = min(kHflClipStepCap, kHflClipStepKappa / sigma)
// times its clipped gradient, i.e. lr = normalizer * s, so the step follows
// the noise (sigma = z C per entry; 0 when non-private) and not the party's
// size. Inputs are public or DP-released (the normaliser is eta * c~).
// kappa and the cap were chosen on the parties' own validation splits of
// MovieLens 100K and the 70k-user synthetic set (docs/results.md).
inline constexpr double kHflClipStepKappa = 1.5;
inline constexpr double kHflClipStepCap = 3.0;
double HflClippedLearningRate(double normalizer, double sigma);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_DP_ITERATION_H_
