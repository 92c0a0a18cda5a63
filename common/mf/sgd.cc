#include "common/mf/sgd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>

#include "common/dp/noise.h"
#include "common/dp/snapping.h"
#include "common/mf/clipping.h"
#include "common/mf/internal/row_kernels.h"

namespace fedmf::mf {
namespace {

using internal::ConstRowMap;
using internal::RowMap;
using internal::ScaleIntoBall;

[[noreturn]] void Fatal(const char* what) {
  std::fprintf(stderr, "fedmf: fatal error in mf/sgd: %s\n", what);
  std::abort();
}

template <int P>
void AccumulateKernel(const RatingMatrix& x, const std::vector<int32_t>& users, const Matrix& u,
                      const Matrix& v, Matrix* grad_u, Matrix* grad_v, int32_t dim) {
  const double* ud = u.data();
  const double* vd = v.data();
  double* gud = grad_u != nullptr ? grad_u->data() : nullptr;
  double* gvd = grad_v != nullptr ? grad_v->data() : nullptr;
  for (const int32_t i : users) {
    ConstRowMap<P> ui(ud + static_cast<Eigen::Index>(i) * dim, dim);
    for (const RatingMatrix::Entry& entry : x.Row(i)) {
      const Eigen::Index j = entry.item;
      ConstRowMap<P> vj(vd + j * dim, dim);
      // d/du (x - <u,v>)^2 = -2 e v, d/dv = -2 e u; both at the same (U, V).
      const double minus_two_e = -2.0 * (static_cast<double>(entry.value) - ui.dot(vj));
      if (gud != nullptr) {
        RowMap<P>(gud + static_cast<Eigen::Index>(i) * dim, dim) += minus_two_e * vj;
      }
      if (gvd != nullptr) RowMap<P>(gvd + j * dim, dim) += minus_two_e * ui;
    }
  }
}

// AccumulateKernel over single ratings: `positions` ascending in row order,
// so one pass over the row offsets finds each rating's user.
template <int P>
void AccumulateRatingKernel(const RatingMatrix& x, const std::vector<int32_t>& positions,
                            const Matrix& u, const Matrix& v, Matrix* grad_u, Matrix* grad_v,
                            int32_t dim) {
  const double* ud = u.data();
  const double* vd = v.data();
  double* gud = grad_u != nullptr ? grad_u->data() : nullptr;
  double* gvd = grad_v != nullptr ? grad_v->data() : nullptr;
  int32_t i = 0;
  int64_t row_begin = 0;  // position of user i's first rating
  for (const int32_t pos : positions) {
    while (pos >= row_begin + x.RowSize(i)) row_begin += x.RowSize(i++);
    const RatingMatrix::Entry& entry = x.Row(i)[static_cast<size_t>(pos - row_begin)];
    ConstRowMap<P> ui(ud + static_cast<Eigen::Index>(i) * dim, dim);
    const Eigen::Index j = entry.item;
    ConstRowMap<P> vj(vd + j * dim, dim);
    const double minus_two_e = -2.0 * (static_cast<double>(entry.value) - ui.dot(vj));
    if (gud != nullptr)
      RowMap<P>(gud + static_cast<Eigen::Index>(i) * dim, dim) += minus_two_e * vj;
    if (gvd != nullptr) RowMap<P>(gvd + j * dim, dim) += minus_two_e * ui;
  }
}

// Prefetches the cache lines of one row. Rows are 8*p bytes at arbitrary
// 8-byte offsets, so they may straddle one more line than 8*p/64.
inline void PrefetchRow(const double* row, int32_t dim) {
  if (dim <= 0) return;
  const char* first = reinterpret_cast<const char*>(row);
  const char* last = reinterpret_cast<const char*>(row + dim) - 1;
  for (const char* p = first; p <= last; p += 64) __builtin_prefetch(p, 1, 3);
  __builtin_prefetch(last, 1, 3);
}

// How many ratings ahead to prefetch rows. One update takes ~30-50 ns and an
// L3/DRAM miss ~50-100 ns, so a handful of ratings of lookahead hides it.
constexpr size_t kPrefetchAhead = 8;

// Runs `batch` in order; returns `sum_sq` plus the squared errors, added one
// by one (a run split into consecutive batches sums exactly as one batch).
template <int P>
double SgdKernel(std::span<const data::Rating> batch, Matrix& u, Matrix& v,
                 const SgdOptions& options, double* scratch, double sum_sq = 0.0) {
  const int32_t dim = static_cast<int32_t>(u.cols());
  double* ud = u.data();
  double* vd = v.data();
  const double lr = options.learning_rate;
  const double two_lr = 2.0 * lr;
  // u += lr (2 e v - l2 u)  ==  u * (1 - lr l2) + (2 lr e) v
  const double decay = 1.0 - lr * options.l2;
  const bool clip = options.rating_max > 0;
  const double r_max = options.rating_max;
  const double sqrt_r = clip ? std::sqrt(r_max) : 0.0;
  const bool upd_u = options.update_u;
  const bool upd_v = options.update_v;
  RowMap<P> u_old(scratch, dim);

  const size_t n = batch.size();
  for (size_t k = 0; k < n; ++k) {
    // The rows are random accesses into U and V (at p = 20 on MovieLens-100K
    // they do not fit in L2 next to the ratings); fetch them early.
    if (k + kPrefetchAhead < n) {
      const data::Rating& ahead = batch[k + kPrefetchAhead];
      PrefetchRow(ud + static_cast<Eigen::Index>(ahead.user) * dim, dim);
      PrefetchRow(vd + static_cast<Eigen::Index>(ahead.item) * dim, dim);
    }
    const data::Rating& r = batch[k];
    double* up = ud + static_cast<Eigen::Index>(r.user) * dim;
    double* vp = vd + static_cast<Eigen::Index>(r.item) * dim;
    RowMap<P> ui(up, dim);
    RowMap<P> vj(vp, dim);
    const double e = static_cast<double>(r.value) - ui.dot(vj);
    sum_sq += e * e;
    const double step = two_lr * e;
    // Projected SGD: only the two touched rows can have left the feasible
    // set. With clipping, "zero the negatives" is fused into the update pass
    // (bit-identical to updating and then calling ClipRowKernel).
    if (upd_u && upd_v) {
      u_old = ui;  // v's update must see u_i from before this rating
      if (clip) {
        ui = (decay * ui + step * vj).cwiseMax(0.0);
        vj = (decay * vj + step * u_old).cwiseMax(0.0);
        ScaleIntoBall<P>(ui, r_max, sqrt_r);
        ScaleIntoBall<P>(vj, r_max, sqrt_r);
      } else {
        ui = decay * ui + step * vj;
        vj = decay * vj + step * u_old;
      }
    } else if (upd_u) {
      if (clip) {
        ui = (decay * ui + step * vj).cwiseMax(0.0);
        ScaleIntoBall<P>(ui, r_max, sqrt_r);
      } else {
        ui = decay * ui + step * vj;
      }
    } else if (upd_v) {
      if (clip) {
        vj = (decay * vj + step * ui).cwiseMax(0.0);
        ScaleIntoBall<P>(vj, r_max, sqrt_r);
      } else {
        vj = decay * vj + step * ui;
      }
    }
  }
  return sum_sq;
}

// Runs ratings[order[0]], ratings[order[1]], ... through SgdKernel, gathered
// into `chunk` (reused; sized here) a chunk at a time so that the kernel
// streams through memory and prefetches rows ahead. Returns the squared
// errors, added in order: the same updates and the same sum as one kernel call
// over the ratings copied in that order, at 4 bytes per rating of order
// instead of 12 for a copy.
double RunInOrder(const std::vector<data::Rating>& ratings, std::span<const uint32_t> order,
                  Matrix& u, Matrix& v, const SgdOptions& options, double* scratch,
                  std::vector<data::Rating>& chunk) {
  constexpr size_t kChunk = 8192;  // 96 KiB of ratings: stays in L2
  chunk.resize(std::min(kChunk, order.size()));
  const int32_t dim = static_cast<int32_t>(u.cols());
  double sum_sq = 0.0;
  for (size_t pos = 0; pos < order.size(); pos += kChunk) {
    const size_t take = std::min(kChunk, order.size() - pos);
    for (size_t k = 0; k < take; ++k) chunk[k] = ratings[order[pos + k]];
    const std::span<const data::Rating> part(chunk.data(), take);
    sum_sq = internal::DispatchDim(dim, [&](auto tag) {
      return SgdKernel<decltype(tag)::value>(part, u, v, options, scratch, sum_sq);
    });
  }
  return sum_sq;
}

// The blocked schedule of SgdOptions::threads: P x P blocks by (user mod P,
// item mod P), each shuffled by its own stream (forked from `rng` under one
// fresh draw, so every epoch differs); sub-epoch s runs blocks
// (t, (t + s) mod P) for t = 0..P-1 on P threads, which write disjoint rows
// of U (user classes t) and of V (item classes (t + s) mod P). Joining the
// threads after each sub-epoch orders every block after the ones before it,
// whatever the scheduler does, so the result depends on P and rng only.
// A block holds the 4-byte indices of its ratings (RunInOrder gathers them).
double BlockedEpoch(const std::vector<data::Rating>& ratings, Matrix& u, Matrix& v,
                    const SgdOptions& options, int32_t p, random::Csprng& rng) {
  std::vector<std::vector<uint32_t>> blocks(static_cast<size_t>(p) * p);
  // Runs f(t) for t = 0..p-1 on p threads (t = 0 on this one) and joins.
  auto on_all = [p](auto&& f) {
    std::vector<std::thread> workers;
    for (int32_t t = 1; t < p; ++t) workers.emplace_back(f, t);
    f(0);
    for (auto& w : workers) w.join();
  };
  // Thread t fills the blocks of user class t (row t of the grid): a
  // parallel pass whose result does not depend on the threads' timing.
  on_all([&](int32_t t) {
    for (int32_t c = 0; c < p; ++c) blocks[t * p + c].reserve(ratings.size() / blocks.size() + 16);
    for (size_t k = 0; k < ratings.size(); ++k) {
      const data::Rating& r = ratings[k];
      if (r.user % p == t) {
        blocks[static_cast<size_t>(t) * p + r.item % p].push_back(static_cast<uint32_t>(k));
      }
    }
  });
  const std::string epoch = std::to_string(rng.NextU64());
  const int32_t dim = static_cast<int32_t>(u.cols());
  std::vector<double> sums(static_cast<size_t>(p), 0.0);
  std::vector<std::vector<double>> scratch(static_cast<size_t>(p),
                                           std::vector<double>(std::max(dim, 1)));
  std::vector<std::vector<data::Rating>> chunks(static_cast<size_t>(p));
  for (int32_t s = 0; s < p; ++s) {
    auto run = [&](int32_t t) {
      const size_t b = static_cast<size_t>(t) * p + (t + s) % p;
      random::Csprng block_rng = rng.Fork("sgd-block/" + epoch + "/" + std::to_string(b));
      std::shuffle(blocks[b].begin(), blocks[b].end(), block_rng);
      sums[t] += RunInOrder(ratings, blocks[b], u, v, options, scratch[t].data(), chunks[t]);
    };
    on_all(run);
  }
  double total = 0;
  for (double x : sums) total += x;  // fixed order: deterministic
  return total;
}

// Aborts on what the hot loop does not check: U and V of different widths or
// one matrix (it would alias u_i and v_i and break the "v's step uses the old
// u_i" rule), an index out of range, more ratings than 4-byte indices reach.
void CheckEpochInputs(const std::vector<data::Rating>& ratings, const Matrix& u, const Matrix& v) {
  if (u.cols() != v.cols()) Fatal("SgdEpoch: U and V have different widths");
  if (&u == &v) Fatal("SgdEpoch: U and V must be different matrices");
  const Eigen::Index n_users = u.rows();
  const Eigen::Index n_items = v.rows();
  for (const data::Rating& r : ratings) {
    if (r.user < 0 || r.user >= n_users || r.item < 0 || r.item >= n_items) {
      Fatal("SgdEpoch: rating index out of range");
    }
  }
  if (ratings.size() > std::numeric_limits<uint32_t>::max()) {
    Fatal("SgdEpoch: more than 2^32 ratings in one epoch");
  }
}

// What both epochs share: an empty epoch's 0, the input checks, and the
// blocked schedule when SgdOptions::threads asks for it and the epoch is
// large enough. nullopt: the caller runs its one-thread epoch.
std::optional<double> EmptyOrBlockedEpoch(const std::vector<data::Rating>& ratings, Matrix& u,
                                          Matrix& v, const SgdOptions& options,
                                          random::Csprng& rng) {
  if (ratings.empty()) return 0.0;
  CheckEpochInputs(ratings, u, v);
  const int64_t n = static_cast<int64_t>(ratings.size());
  if (options.threads <= 1 || n < kMinRatingsPerThread * options.threads) return std::nullopt;
  return BlockedEpoch(ratings, u, v, options, options.threads, rng) / static_cast<double>(n);
}

}  // namespace

void AccumulateGradients(const RatingMatrix& x, const std::vector<int32_t>& users, const Matrix& u,
                         const Matrix& v, Matrix* grad_u, Matrix* grad_v) {
  if (grad_u == nullptr && grad_v == nullptr) return;
  if (u.cols() != v.cols()) Fatal("AccumulateGradients: U and V have different widths");
  if (u.rows() < x.num_users() || v.rows() < x.num_items()) {
    Fatal("AccumulateGradients: embeddings smaller than the rating matrix");
  }
  if (grad_u != nullptr && (grad_u->rows() != u.rows() || grad_u->cols() != u.cols())) {
    Fatal("AccumulateGradients: grad_u shape differs from U");
  }
  if (grad_v != nullptr && (grad_v->rows() != v.rows() || grad_v->cols() != v.cols())) {
    Fatal("AccumulateGradients: grad_v shape differs from V");
  }
  for (const int32_t i : users) {
    if (i < 0 || i >= x.num_users()) Fatal("AccumulateGradients: user out of range");
  }
  const int32_t dim = static_cast<int32_t>(u.cols());
  internal::DispatchDim(dim, [&](auto tag) {
    AccumulateKernel<decltype(tag)::value>(x, users, u, v, grad_u, grad_v, dim);
  });
}

void AccumulateRatingGradients(const RatingMatrix& x, const std::vector<int32_t>& positions,
                               const Matrix& u, const Matrix& v, Matrix* grad_u, Matrix* grad_v) {
  if (grad_u == nullptr && grad_v == nullptr) return;
  if (u.cols() != v.cols()) Fatal("AccumulateRatingGradients: U and V have different widths");
  if (u.rows() < x.num_users() || v.rows() < x.num_items()) {
    Fatal("AccumulateRatingGradients: embeddings smaller than the rating matrix");
  }
  if (grad_u != nullptr && (grad_u->rows() != u.rows() || grad_u->cols() != u.cols())) {
    Fatal("AccumulateRatingGradients: grad_u shape differs from U");
  }
  if (grad_v != nullptr && (grad_v->rows() != v.rows() || grad_v->cols() != v.cols())) {
    Fatal("AccumulateRatingGradients: grad_v shape differs from V");
  }
  for (size_t k = 0; k < positions.size(); ++k) {
    if (positions[k] < 0 || positions[k] >= x.nnz() ||
        (k > 0 && positions[k] <= positions[k - 1])) {
      Fatal("AccumulateRatingGradients: positions must be ascending and < nnz");
    }
  }
  const int32_t dim = static_cast<int32_t>(u.cols());
  internal::DispatchDim(dim, [&](auto tag) {
    AccumulateRatingKernel<decltype(tag)::value>(x, positions, u, v, grad_u, grad_v, dim);
  });
}

void AccumulateUserClippedVGradient(const RatingMatrix& x, const std::vector<int32_t>& users,
                                    const Matrix& u, const Matrix& v, double clip_norm,
                                    Matrix& grad_v) {
  if (!(clip_norm > 0) || !std::isfinite(clip_norm)) {
    Fatal("AccumulateUserClippedVGradient: clip_norm must be > 0 and finite");
  }
  if (u.cols() != v.cols() || grad_v.rows() != v.rows() || grad_v.cols() != v.cols()) {
    Fatal("AccumulateUserClippedVGradient: shapes differ");
  }
  if (u.rows() < x.num_users() || v.rows() < x.num_items()) {
    Fatal("AccumulateUserClippedVGradient: embeddings smaller than the rating matrix");
  }
  // (item j, c_j) of the current user: sorted by item so duplicates merge;
  // O(its ratings) per user, nothing sized by the catalogue on this DP path.
  std::vector<std::pair<int32_t, double>> coef;
  for (const int32_t i : users) {
    if (i < 0 || i >= x.num_users()) Fatal("AccumulateUserClippedVGradient: user out of range");
    const auto ui = u.row(i);
    coef.clear();
    for (const RatingMatrix::Entry& entry : x.Row(i)) {
      coef.emplace_back(entry.item,
                        -2.0 * (static_cast<double>(entry.value) - ui.dot(v.row(entry.item))));
    }
    std::sort(coef.begin(), coef.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t merged = 0;
    for (size_t k = 0; k < coef.size(); ++k) {
      if (merged > 0 && coef[merged - 1].first == coef[k].first) {
        coef[merged - 1].second += coef[k].second;
      } else {
        coef[merged++] = coef[k];
      }
    }
    coef.resize(merged);
    double c2 = 0;
    for (const auto& [j, c] : coef) c2 += c * c;
    const double norm = std::sqrt(c2) * ui.norm();
    const double scale = norm > clip_norm ? clip_norm / norm : 1.0;
    for (const auto& [j, c] : coef) grad_v.row(j) += (scale * c) * ui;
  }
}

void NoisyGradientStep(Matrix& m, const Matrix& grad, double sigma, double normalizer, double lr,
                       double rating_max, random::Csprng& rng) {
  if (grad.rows() != m.rows() || grad.cols() != m.cols()) {
    Fatal("NoisyGradientStep: gradient shape differs from the matrix");
  }
  if (!(normalizer > 0)) Fatal("NoisyGradientStep: normalizer must be > 0");
  if (!(sigma >= 0)) Fatal("NoisyGradientStep: sigma must be >= 0");
  const double c = lr / normalizer;
  double* md = m.data();
  const double* gd = grad.data();
  const size_t n = static_cast<size_t>(m.size());
  if (sigma > 0) {
    // Noise goes on every entry, touched or not: the released matrix is what
    // the DP analysis covers. A small stack chunk keeps the noise in L1 and
    // avoids a matrix-sized allocation per step.
    constexpr size_t kChunk = 1024;
    double noise[kChunk];
    for (size_t off = 0; off < n; off += kChunk) {
      const size_t len = std::min(kChunk, n - off);
      dp::FillGaussian(rng, sigma, noise, len);
      for (size_t k = 0; k < len; ++k) md[off + k] -= c * (gd[off + k] + noise[k]);
    }
  } else {
    // sigma == 0: no noise is drawn, so the rng is not advanced.
    for (size_t k = 0; k < n; ++k) md[k] -= c * gd[k];
  }
  // Always projected: the sensitivity bound behind sigma assumes the next
  // gradient is taken at clipped embeddings, so there is no "off" switch here
  // (ClipEmbeddings aborts on R <= 0 rather than silently skipping Pi).
  ClipEmbeddings(m, rating_max);
  if (sigma > 0 && c > 0) {
    // The noised matrix is what parties release: snap it to a grid far
    // coarser than its floating-point resolution (common/dp/snapping.h), so
    // the set of possible outputs does not depend on the data. Toward zero:
    // entries stay >= 0 and row norms <= sqrt(R), so M stays feasible.
    const double grid = dp::SnapGranularity(c * sigma, std::sqrt(rating_max));
    dp::SnapTowardZero(md, n, grid);
  }
}

double SgdEpoch(const std::vector<data::Rating>& ratings, Matrix& u, Matrix& v,
                const SgdOptions& options, random::Csprng& rng) {
  if (auto done = EmptyOrBlockedEpoch(ratings, u, v, options, rng)) return *done;
  // The epoch's order is the permutation std::shuffle applies to a copy of
  // the ratings (its swaps do not depend on the values): the same updates, in
  // the same order, as shuffling a copy.
  std::vector<uint32_t> order(ratings.size());
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  const int32_t dim = static_cast<int32_t>(u.cols());
  // Holds u_i's pre-update value; allocated once so the dynamic-size
  // fallback does not allocate per rating.
  std::vector<double> scratch(static_cast<size_t>(std::max(dim, 1)));
  std::vector<data::Rating> chunk;
  return RunInOrder(ratings, order, u, v, options, scratch.data(), chunk) /
         static_cast<double>(ratings.size());
}

double SgdEpochReordering(std::vector<data::Rating>& ratings, Matrix& u, Matrix& v,
                          const SgdOptions& options, random::Csprng& rng) {
  if (auto done = EmptyOrBlockedEpoch(ratings, u, v, options, rng)) return *done;
  // The same swaps SgdEpoch makes on its order, made on the ratings.
  std::shuffle(ratings.begin(), ratings.end(), rng);
  const int32_t dim = static_cast<int32_t>(u.cols());
  std::vector<double> scratch(static_cast<size_t>(std::max(dim, 1)));
  const std::span<const data::Rating> all(ratings.data(), ratings.size());
  const double sum_sq = internal::DispatchDim(dim, [&](auto tag) {
    return SgdKernel<decltype(tag)::value>(all, u, v, options, scratch.data(), 0.0);
  });
  return sum_sq / static_cast<double>(ratings.size());
}

LearningRateSchedule::LearningRateSchedule(double initial, double final_ratio, int64_t total_steps,
                                           double decay_fraction)
    : initial_(initial),
      final_ratio_(final_ratio),
      total_steps_(total_steps),
      decay_fraction_(std::clamp(decay_fraction, 0.0, 1.0)) {}

double LearningRateSchedule::At(int64_t step) const {
  // Decay over steps [0, D] with D = decay_fraction * total_steps: At(0) is
  // the initial rate, At(D) and every later step the final one. With the
  // paper's 0.8 and T*T' = 1000 steps, 800..999 (the last 20%) are constant.
  const double final_lr = initial_ * final_ratio_;
  const double decay_steps = decay_fraction_ * static_cast<double>(total_steps_);
  if (!(decay_steps > 0)) return final_lr;
  const double t = std::clamp(static_cast<double>(step) / decay_steps, 0.0, 1.0);
  return initial_ + (final_lr - initial_) * t;
}

}  // namespace fedmf::mf
