#include "common/fmf/dp_iteration.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/mf/sampling.h"
#include "common/mf/sgd.h"

namespace fedmf::fmf {

double ExpectedBatchRatings(const mf::RatingMatrix& x, double sample_rate) {
  return std::max(1.0, sample_rate * static_cast<double>(x.nnz()));
}

double HflClippedLearningRate(double normalizer, double sigma) {
  const double step =
      sigma > 0 ? std::min(kHflClipStepCap, kHflClipStepKappa / sigma) : kHflClipStepCap;
  return normalizer * step;
}

mf::RatingMatrix BuildDpTrainingMatrix(int32_t num_users, int32_t num_items,
                                       const std::vector<data::Rating>& ratings, double rating_max,
                                       int32_t theta, random::Csprng& rng) {
  std::vector<data::Rating> clamped = ratings;
  for (data::Rating& r : clamped) r.value = std::clamp<double>(r.value, 0.0, rating_max);
  mf::RatingMatrix x(num_users, num_items, clamped);
  if (theta > 0) return mf::RandomTrim(x, theta, rng);
  return x;
}

void ComputeDpGradients(const mf::RatingMatrix& x, const std::vector<int32_t>& batch,
                        const mf::Matrix& u, const mf::Matrix& v, const DpIterationSpec& spec,
                        DpScratch& scratch) {
  mf::Matrix* gu = nullptr;
  mf::Matrix* gv = nullptr;
  if (spec.update_u) {
    scratch.grad_u.setZero(u.rows(), u.cols());
    gu = &scratch.grad_u;
  }
  if (spec.update_v) {
    scratch.grad_v.setZero(v.rows(), v.cols());
    gv = &scratch.grad_v;
  }
  if (spec.user_clip > 0) {
    // Per-user clipping bounds a user's contribution to one released matrix;
    // a step that also moved U would need its own analysis.
    if (gu != nullptr || gv == nullptr) {
      std::fprintf(stderr, "fedmf: fatal: per-user clipping is for V-only steps\n");
      std::abort();
    }
    mf::AccumulateUserClippedVGradient(x, batch, u, v, spec.user_clip, *gv);
    return;
  }
  // Both gradients are taken at the same (U, V) before either moves.
  mf::AccumulateGradients(x, batch, u, v, gu, gv);
}

void RunDpIteration(const mf::RatingMatrix& x, mf::Matrix& u, mf::Matrix& v,
                    const DpIterationSpec& spec, double learning_rate, random::Csprng& rng,
                    DpScratch& scratch) {
  const std::vector<int32_t> batch = mf::PoissonSampleRows(x.num_users(), spec.sample_rate, rng);
  ComputeDpGradients(x, batch, u, v, spec, scratch);
  mf::Matrix* gu = spec.update_u ? &scratch.grad_u : nullptr;
  mf::Matrix* gv = spec.update_v ? &scratch.grad_v : nullptr;
  if (gu != nullptr) {
    mf::NoisyGradientStep(u, *gu, spec.sigma_u, spec.normalizer, learning_rate, spec.rating_max,
                          rng);
  }
  if (gv != nullptr) {
    mf::NoisyGradientStep(v, *gv, spec.sigma_v, spec.normalizer, learning_rate * spec.v_step_scale,
                          spec.rating_max, rng);
  }
}

}  // namespace fedmf::fmf
