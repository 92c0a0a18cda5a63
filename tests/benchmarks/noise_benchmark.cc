// Throughput of the DP noise samplers (all on the AES-256-CTR Csprng).
// FillGaussian is the hot path: every noisy gradient / embedding upload
// noises a whole matrix at once.
#include <cstddef>
#include <vector>

#include "benchmark/benchmark.h"
#include "common/dp/noise.h"
#include "common/fmf/job_config.h"
#include "common/fmf/noise_plan.h"
#include "common/random/csprng.h"

namespace fedmf::dp {
namespace {

void BM_FillGaussian(benchmark::State& state) {
  Csprng rng = Csprng::FromSeed(1);
  std::vector<double> block(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    FillGaussian(rng, 1.0, block.data(), block.size());
    benchmark::DoNotOptimize(block.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_FillGaussian)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

void BM_AddGaussian(benchmark::State& state) {
  Csprng rng = Csprng::FromSeed(2);
  std::vector<double> block(static_cast<size_t>(state.range(0)), 0.0);
  for (auto _ : state) {
    AddGaussian(rng, 1.0, block.data(), block.size());
    benchmark::DoNotOptimize(block.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AddGaussian)->Arg(1 << 16);

void BM_SampleGaussian(benchmark::State& state) {
  Csprng rng = Csprng::FromSeed(3);
  for (auto _ : state) benchmark::DoNotOptimize(SampleGaussian(rng, 1.0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SampleGaussian);

void BM_Laplace(benchmark::State& state) {
  Csprng rng = Csprng::FromSeed(4);
  for (auto _ : state) benchmark::DoNotOptimize(SampleLaplace(rng, 1.0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Laplace);

void BM_Gamma(benchmark::State& state) {
  Csprng rng = Csprng::FromSeed(5);
  const double shape = static_cast<double>(state.range(0)) / 10.0;
  for (auto _ : state) benchmark::DoNotOptimize(SampleGamma(rng, shape, 1.0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Gamma)->Arg(5)->Arg(200);  // shape 0.5 (boosted) and 20

void BM_GammaNormVector(benchmark::State& state) {
  Csprng rng = Csprng::FromSeed(6);
  const int d = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(SampleGammaNormVector(rng, d, 1.0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GammaNormVector)->Arg(20);

// A job's noise plan, as every party and the server compute it at admission:
// calibrations of z by bisection, each step evaluating the RDP curve. The
// sample rate alternates so that every plan starts without the accountant's
// per-q series cache, as a process's first plan does.
void BM_PlanNoise(benchmark::State& state) {
  fmf::JobConfig config;  // HFL, T = 100, T' = 10, q = 0.01, epsilon = 1
  bool other = false;
  for (auto _ : state) {
    config.sample_rate = other ? 0.0101 : 0.01;
    other = !other;
    benchmark::DoNotOptimize(fmf::PlanNoise(config));
  }
}
BENCHMARK(BM_PlanNoise)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fedmf::dp
