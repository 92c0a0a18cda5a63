// Cost of the multi-party PSI (common/psi) that aligns VFL users: time per
// party and for the relay, bytes each way. Results: docs/benchmarks.md.
//
//   build/bin/psi_benchmark --benchmark_filter=Psi
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "common/crypto/ristretto255.h"
#include "common/psi/in_process.h"

namespace {

using fedmf::psi::PsiRun;

// s parties of n users each; party p holds users [p * n/10, p * n/10 + n), so
// neighbours overlap by 90 % and the whole intersection is 1 - (s-1)/10.
void BM_PsiInProcess(benchmark::State& state) {
  const int s = static_cast<int>(state.range(0));
  const int n = static_cast<int>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  std::vector<std::vector<std::string>> ids(s);
  for (int p = 0; p < s; ++p) {
    for (int k = p * (n / 10); k < p * (n / 10) + n; ++k)
      ids[p].push_back(absl::StrCat("user-", k));
  }
  PsiRun last;
  for (auto _ : state) {
    fedmf::random::Csprng rng = fedmf::random::Csprng::FromSeed(1);
    auto run = fedmf::psi::RunPsiInProcess(ids, "bench", rng, threads);
    if (!run.ok()) {
      state.SkipWithError(std::string(run.status().message()).c_str());
      return;
    }
    last = std::move(*run);
  }
  state.counters["intersection"] = static_cast<double>(last.intersection_size);
  state.counters["party0_s"] = last.parties[0].seconds;
  state.counters["party0_MB_up"] = static_cast<double>(last.parties[0].bytes_sent) / 1e6;
  state.counters["party0_MB_down"] = static_cast<double>(last.parties[0].bytes_received) / 1e6;
  state.counters["relay_s"] = last.relay_seconds;
  state.counters["relay_MB_in"] = static_cast<double>(last.relay_bytes_in) / 1e6;
  state.counters["relay_MB_out"] = static_cast<double>(last.relay_bytes_out) / 1e6;
}
BENCHMARK(BM_PsiInProcess)
    ->Args({2, 10000, 1})
    ->Args({2, 100000, 1})
    ->Args({2, 100000, 2})
    ->Args({3, 100000, 2})
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

void BM_RistrettoScalarMult(benchmark::State& state) {
  fedmf::random::Csprng rng = fedmf::random::Csprng::FromSeed(1);
  auto k = fedmf::crypto::RistrettoScalar::Random(rng);
  auto p = fedmf::crypto::HashToRistretto("bench", "x");
  for (auto _ : state) {
    auto q = k->Multiply(*p);
    benchmark::DoNotOptimize(q);
  }
}
BENCHMARK(BM_RistrettoScalarMult);

void BM_HashToRistretto(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) {
    auto q = fedmf::crypto::HashToRistretto("bench", absl::StrCat("user-", ++i));
    benchmark::DoNotOptimize(q);
  }
}
BENCHMARK(BM_HashToRistretto);

}  // namespace
