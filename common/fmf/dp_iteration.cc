#include "common/fmf/dp_iteration.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/mf/sampling.h"
#include "common/mf/sgd.h"

namespace fedmf::fmf {

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

namespace {

// The size of x's sampling unit, which PoissonSampleRows indexes with int32.
int32_t UnitCount(const mf::RatingMatrix& x, SamplingUnit unit) {
  if (unit == SamplingUnit::kUser) return x.num_users();
  if (x.nnz() > std::numeric_limits<int32_t>::max()) {
    std::fprintf(stderr,
                 "fedmf: fatal: a party's DP training matrix holds more than 2^31 - 1 "
                 "ratings, the most per-rating sampling indexes\n");
    std::abort();
  }
  return static_cast<int32_t>(x.nnz());
}

}  // namespace

std::vector<int32_t> SampleDpBatch(const mf::RatingMatrix& x, const DpIterationSpec& spec,
                                   random::Csprng& rng) {
  // Poisson sampling: each member of the unit independently with
  // probability q (the mechanism the RDP accountant's amplification covers).
  return mf::PoissonSampleRows(UnitCount(x, spec.sampling_unit), spec.sample_rate, rng);
}

std::vector<int32_t> FullDpBatch(const mf::RatingMatrix& x, SamplingUnit unit) {
  std::vector<int32_t> all(static_cast<size_t>(UnitCount(x, unit)));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

std::vector<data::Rating> HoldOutEachRating(std::vector<data::Rating>& train, int32_t num_items,
                                            double fraction, const random::Csprng& rng) {
  if (!(fraction > 0 && fraction < 1)) return {};
  std::sort(train.begin(), train.end(), [](const data::Rating& a, const data::Rating& b) {
    return a.user != b.user ? a.user < b.user : a.item < b.item;
  });
  std::vector<data::Rating> kept, held;
  kept.reserve(train.size());
  for (size_t begin = 0; begin < train.size();) {
    const int32_t user = train[begin].user;
    random::Csprng user_rng = rng.Fork(absl::StrCat(user));
    // Items drawn for this user, ascending; the user's ratings too (by item).
    const std::vector<int32_t> items = mf::PoissonSampleRows(num_items, fraction, user_rng);
    size_t next = 0;
    for (; begin < train.size() && train[begin].user == user; ++begin) {
      const data::Rating& r = train[begin];
      while (next < items.size() && items[next] < r.item) ++next;
      (next < items.size() && items[next] == r.item ? held : kept).push_back(r);
    }
  }
  train = std::move(kept);
  return held;
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
    if (gu != nullptr || gv == nullptr || spec.sampling_unit != SamplingUnit::kUser) {
      std::fprintf(stderr, "fedmf: fatal: per-user clipping is for V-only steps on users\n");
      std::abort();
    }
    mf::AccumulateUserClippedVGradient(x, batch, u, v, spec.user_clip, *gv);
    return;
  }
  // Both gradients are taken at the same (U, V) before either moves.
  if (spec.sampling_unit == SamplingUnit::kRating) {
    mf::AccumulateRatingGradients(x, batch, u, v, gu, gv);
  } else {
    mf::AccumulateGradients(x, batch, u, v, gu, gv);
  }
}

void RunDpIteration(const mf::RatingMatrix& x, mf::Matrix& u, mf::Matrix& v,
                    const DpIterationSpec& spec, double learning_rate, random::Csprng& rng,
                    DpScratch& scratch) {
  const std::vector<int32_t> batch = SampleDpBatch(x, spec, rng);
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
