// One DP local iteration of SGDMF (FMF paper Sections 4.1-5.1): Poisson-sample
// the job's sampling unit (ratings per rating, users per user), sum the
// per-rating gradients of the batch, add Gaussian noise to EVERY entry of
// each released matrix, normalize by the expected batch size, step, and clip
// (Pi).
#ifndef FEDMF_COMMON_FMF_DP_ITERATION_H_
#define FEDMF_COMMON_FMF_DP_ITERATION_H_

#include <cstdint>
#include <vector>

#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

struct DpIterationSpec {
  bool update_u = false;
  bool update_v = false;
  double sample_rate = 0.01;
  // What the Poisson sampling draws at sample_rate (JobConfig::
  // DpSamplingUnit): kRating for per-rating neighbours — each rating of x
  // independently, so the removed rating's membership is independent of its
  // user's other ratings (the FMF paper's user sampling is not: issue #54);
  // kUser for per-user neighbours.
  SamplingUnit sampling_unit = SamplingUnit::kUser;
  double sigma_u = 0;       // per-entry noise std-dev on the U gradient (0 = none)
  double sigma_v = 0;       // per-entry noise std-dev on the V gradient
  double v_step_scale = 1;  // VFL scales the V step by m_k/m
  double rating_max = 5;
  // > 0: HFL per-user clipping (JobConfig::clip_norm): V only, each sampled
  // user's whole V-gradient scaled to this L2 norm before it is summed.
  double user_clip = 0;
  // Expected number of ratings in a batch (eta * #ratings, with #ratings the
  // party's DP size release): a public constant, as the expected batch size
  // is in DP-SGD (Abadi et al. 2016).
  double normalizer = 1;
};

// Reusable gradient buffers, so a loop of iterations allocates once.
struct DpScratch {
  mf::Matrix grad_u;
  mf::Matrix grad_v;
};

// One step's Poisson sample of x at spec.sample_rate: user ids (kUser), or
// positions of ratings in x's row order (kRating, see
// mf::AccumulateRatingGradients), ascending either way.
std::vector<int32_t> SampleDpBatch(const mf::RatingMatrix& x, const DpIterationSpec& spec,
                                   random::Csprng& rng);
// Every member of x's sampling unit (all users, or all rating positions): the
// batch at rate 1, the worst case the sensitivity tests measure.
std::vector<int32_t> FullDpBatch(const mf::RatingMatrix& x, SamplingUnit unit);

// The pre-noise release of one DP iteration on `batch` (of spec.sampling_unit,
// as SampleDpBatch draws it): the summed per-rating gradients into
// scratch.grad_u / grad_v (those spec updates; both at the same U, V).
// RunDpIteration noises exactly these; the sensitivity tests measure them.
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

// Per-rating jobs' validation split: each rating of `train` is held out
// independently with probability `fraction` — rating (u, j) exactly when item
// j is in a Bernoulli(fraction) subset of [0, num_items) drawn from user u's
// own stream (rng.Fork(u)) — so whether a rating is held out does not depend
// on any other rating, and removing one leaves every other rating's side
// bit-for-bit the same (a fixed count per user would move the others:
// docs/privacy.md, section sampling). Returns the held-out ratings; `train`
// keeps the rest. Both sorted by (user, item).
std::vector<data::Rating> HoldOutEachRating(std::vector<data::Rating>& train, int32_t num_items,
                                            double fraction, const random::Csprng& rng);

void RunDpIteration(const mf::RatingMatrix& x, mf::Matrix& u, mf::Matrix& v,
                    const DpIterationSpec& spec, double learning_rate, random::Csprng& rng,
                    DpScratch& scratch);

// The default learning rate of a per-user-clipped HFL step (issue #16): each
// sampled user moves V by s = min(kHflClipStepCap, kHflClipStepKappa / sigma)
// times its clipped gradient, i.e. lr = normalizer * s, so the step follows
// the noise (sigma = z C per entry; 0 when non-private) and not the party's
// size. Inputs are public or DP-released (the normaliser is eta * c~).
// kappa and the cap were chosen on the parties' own validation splits of
// MovieLens 100K and the 70k-user synthetic set
// (docs/archive/results-2026.md, section hfl-default).
inline constexpr double kHflClipStepKappa = 1.5;
inline constexpr double kHflClipStepCap = 3.0;
double HflClippedLearningRate(double normalizer, double sigma);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_DP_ITERATION_H_
