// Throughput of the MF engine's hot paths on a MovieLens-100K-shaped problem
// (943 users x 1682 items, 100k ratings). items_per_second is rating updates
// (SgdEpoch), ratings visited (AccumulateGradients) or matrix entries
// (NoisyGradientStep) per second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/data/ratings.h"
#include "common/mf/embeddings.h"
#include "common/mf/grid_sgd.h"
#include "common/mf/sampling.h"
#include "common/mf/sgd.h"
#include "common/random/csprng.h"

namespace {

using fedmf::data::Rating;
using fedmf::mf::Matrix;
using fedmf::random::Csprng;

constexpr int32_t kUsers = 943;
constexpr int32_t kItems = 1682;
constexpr int64_t kRatings = 100000;

// Random (user, item) pairs with values from a rank-5 non-negative model,
// rounded to 1..5 like real star ratings. Duplicated pairs are harmless here.
std::vector<Rating> SyntheticRatings(int32_t users = kUsers, int32_t items = kItems,
                                     int64_t count = kRatings) {
  Csprng rng = Csprng::FromSeed(2024);
  const double s = 2.0 * std::sqrt(3.5 / 5.0);
  Matrix a = fedmf::mf::RandomEmbeddings(users, 5, s, rng);
  Matrix b = fedmf::mf::RandomEmbeddings(items, 5, s, rng);
  std::vector<Rating> out;
  out.reserve(count);
  for (int64_t k = 0; k < count; ++k) {
    const auto i = static_cast<int32_t>(rng.UniformInt(users));
    const auto j = static_cast<int32_t>(rng.UniformInt(items));
    const double x = std::clamp(std::round(a.row(i).dot(b.row(j))), 1.0, 5.0);
    out.push_back({i, j, static_cast<float>(x)});
  }
  return out;
}

const std::vector<Rating>& Ratings() {
  static const std::vector<Rating> ratings = SyntheticRatings();
  return ratings;
}

// One SgdEpoch per benchmark iteration; counts rating updates.
void RunEpochs(benchmark::State& state, const std::vector<Rating>& ratings, Matrix& u, Matrix& v,
               const fedmf::mf::SgdOptions& options, Csprng& rng) {
  double mse = 0;
  for (auto _ : state) {
    mse = fedmf::mf::SgdEpoch(ratings, u, v, options, rng);
    benchmark::DoNotOptimize(mse);
  }
  state.counters["train_mse"] = mse;
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ratings.size()));
}

void BM_SgdEpoch(benchmark::State& state) {
  const auto dim = static_cast<int32_t>(state.range(0));
  const auto& ratings = Ratings();
  Csprng rng = Csprng::FromSeed(1);
  Matrix u = fedmf::mf::RandomEmbeddings(kUsers, dim, fedmf::mf::InitScaleFor(3.5, dim), 5.0, rng);
  Matrix v = fedmf::mf::RandomEmbeddings(kItems, dim, fedmf::mf::InitScaleFor(3.5, dim), 5.0, rng);
  fedmf::mf::SgdOptions options;
  options.learning_rate = 0.01;
  RunEpochs(state, ratings, u, v, options, rng);
}
// 20 is the paper's p (fixed-size kernel); 7 shows the dynamic-size fallback.
BENCHMARK(BM_SgdEpoch)->Arg(10)->Arg(20)->Arg(50)->Arg(7)->Unit(benchmark::kMillisecond);

// The blocked parallel epoch (SgdOptions::threads) on a MovieLens-10M-like
// shape (69878 users x 10677 items, 2M ratings, p = 20); wall time.
void BM_SgdEpochThreads(benchmark::State& state) {
  constexpr int32_t kBigUsers = 69878, kBigItems = 10677;
  static const std::vector<Rating> ratings = SyntheticRatings(kBigUsers, kBigItems, 2000000);
  Csprng rng = Csprng::FromSeed(1);
  Matrix u = fedmf::mf::RandomEmbeddings(kBigUsers, 20, fedmf::mf::InitScaleFor(3.5, 20), 5.0, rng);
  Matrix v = fedmf::mf::RandomEmbeddings(kBigItems, 20, fedmf::mf::InitScaleFor(3.5, 20), 5.0, rng);
  fedmf::mf::SgdOptions options;
  options.learning_rate = 0.01;
  options.threads = static_cast<int32_t>(state.range(0));
  RunEpochs(state, ratings, u, v, options, rng);
}
BENCHMARK(BM_SgdEpochThreads)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The grid trainer (common/mf/grid_sgd.h) on the same shape and data as
// BM_SgdEpochThreads: float32 rows, adaptive steps, blocked order (G = 8).
// The ratings are arranged once, outside the timing; wall time per epoch.
void BM_GridSgdEpoch(benchmark::State& state) {
  constexpr int32_t kBigUsers = 69878, kBigItems = 10677;
  Csprng rng = Csprng::FromSeed(1);
  Matrix u = fedmf::mf::RandomEmbeddings(kBigUsers, 20, fedmf::mf::InitScaleFor(3.5, 20), 5.0, rng);
  Matrix v = fedmf::mf::RandomEmbeddings(kBigItems, 20, fedmf::mf::InitScaleFor(3.5, 20), 5.0, rng);
  fedmf::mf::GridSgdOptions options;
  options.threads = static_cast<int32_t>(state.range(0));
  options.grid = static_cast<int32_t>(state.range(1));
  auto grid = fedmf::mf::GridSgd::Create(SyntheticRatings(kBigUsers, kBigItems, 2000000), u, v,
                                         options, rng);
  if (!grid.ok()) {
    state.SkipWithError(std::string(grid.status().message()).c_str());
    return;
  }
  double mse = 0;
  for (auto _ : state) {
    mse = grid->RunEpoch(rng);
    benchmark::DoNotOptimize(mse);
  }
  state.counters["train_mse"] = mse;
  state.SetItemsProcessed(state.iterations() * grid->num_ratings());
}
BENCHMARK(BM_GridSgdEpoch)
    ->ArgNames({"threads", "grid"})
    ->ArgsProduct({{1, 2}, {8, 16, 32}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_AccumulateGradients(benchmark::State& state) {
  const auto dim = static_cast<int32_t>(state.range(0));
  const fedmf::mf::RatingMatrix x(kUsers, kItems, Ratings());
  Csprng rng = Csprng::FromSeed(2);
  const Matrix u = fedmf::mf::RandomEmbeddings(kUsers, dim, 0.5, 5.0, rng);
  const Matrix v = fedmf::mf::RandomEmbeddings(kItems, dim, 0.5, 5.0, rng);
  std::vector<int32_t> all(kUsers);
  for (int32_t i = 0; i < kUsers; ++i) all[i] = i;
  Matrix gu = Matrix::Zero(kUsers, dim);
  Matrix gv = Matrix::Zero(kItems, dim);
  for (auto _ : state) {
    gu.setZero();
    gv.setZero();
    fedmf::mf::AccumulateGradients(x, all, u, v, &gu, &gv);
    benchmark::DoNotOptimize(gu.data());
    benchmark::DoNotOptimize(gv.data());
  }
  state.SetItemsProcessed(state.iterations() * x.nnz());
}
BENCHMARK(BM_AccumulateGradients)->Arg(20)->Unit(benchmark::kMicrosecond);

// Arg: sigma (0 = the deterministic part alone: axpy + clipping).
void BM_NoisyGradientStep(benchmark::State& state) {
  const double sigma = static_cast<double>(state.range(0));
  Csprng rng = Csprng::FromSeed(3);
  Matrix m = fedmf::mf::RandomEmbeddings(kItems, 20, 0.5, 5.0, rng);
  const Matrix g = Matrix::Zero(kItems, 20);
  for (auto _ : state) {
    fedmf::mf::NoisyGradientStep(m, g, sigma, 1000.0, 0.01, 5.0, rng);
    benchmark::DoNotOptimize(m.data());
  }
  state.SetItemsProcessed(state.iterations() * m.size());
}
BENCHMARK(BM_NoisyGradientStep)->Arg(0)->Arg(30)->Unit(benchmark::kMicrosecond);

void BM_PoissonSampleRows(benchmark::State& state) {
  Csprng rng = Csprng::FromSeed(4);
  for (auto _ : state) {
    auto rows = fedmf::mf::PoissonSampleRows(kUsers, 0.01, rng);
    benchmark::DoNotOptimize(rows.data());
  }
}
BENCHMARK(BM_PoissonSampleRows);

}  // namespace
