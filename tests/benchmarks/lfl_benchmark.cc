// One LFL-SGDMF Stage-2 iteration in process over the real secure
// aggregation (common/lfl/secagg_sum.h): round 1 (noisy item gradients,
// m x p = 1682 x 20 = 33640 entries, ML-100K) and round 2 (replacement
// noise, same length), each a fresh SecAgg+ (or complete-graph) instance
// over n devices with omega = 0.3 and the fixed-point codec of
// ChooseLflCodecs (sigma_v of epsilon = 1, T = 10). Inputs are generated
// once outside the timed loop with the devices' own noise code.
//
// Counters (seconds summed over both rounds; devices' work + server's):
// key_agreement_s, sharing_s, masking_s, unmasking_s, server_s (and the
// server's part of each phase, srv_<phase>_s), and per
// device and iteration the upload / download bytes, next to the plaintext
// payload mp * bits/8 of the paper's O(log n + mp).
//
// Args: n, threads for the devices' work, graph (1 = SecAgg+, 0 = complete),
// bits of Z_{2^k}, active (1 = signed keys + consistency check against an
// active server, common/secagg/signing.h), design_dropout_pct: the dropout rate in
// percent that k and t are chosen for (SecurityRequirements::dropout_rate;
// default 30 = the LFL omega). The LFL skip rule keeps omega = 0.3 either
// way; a design rate below omega buys a smaller neighbourhood at the price of
// aborting (skipping the iteration) when more than ~design% of the devices
// drop. The CPU time column is the main thread's only; read the real time.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "common/lfl/secagg_sum.h"
#include "common/lfl/two_round_dp.h"
#include "common/secagg/parameters.h"

namespace fedmf::lfl {
namespace {

constexpr size_t kItems = 1682;
constexpr size_t kDim = 20;
constexpr double kSigmaV = 270.0;  // ~ epsilon = 1, delta = 1e-5, T = 10 on ML-100K

// Both rounds' requests for n devices, no dropouts, and the inputs they
// point into.
struct Stage2Iteration {
  explicit Stage2Iteration(LflCodecs c) : codecs(std::move(c)) {}
  LflCodecs codecs;
  std::vector<std::vector<double>> x1, x2;
  SecureSumRequest r1, r2;
  size_t len = 0;
};

absl::StatusOr<std::unique_ptr<Stage2Iteration>> MakeStage2Iteration(int64_t n, int bits) {
  const TwoRoundParams dp{n, 0.3, kSigmaV};
  absl::StatusOr<LflCodecs> codecs = ChooseLflCodecs(dp, 5.0, bits);
  if (!codecs.ok()) return codecs.status();
  auto it = std::make_unique<Stage2Iteration>(*std::move(codecs));
  // Round-1 inputs: one non-zero gradient row per device plus its noise;
  // round-2 inputs: the replacement noise for |U1| = n.
  it->len = kItems * kDim;
  it->x1.assign(n, std::vector<double>(it->len, 0.0));
  it->x2.resize(n);
  random::Csprng rng = random::Csprng::FromSeed(1);
  for (int64_t i = 0; i < n; ++i) {
    DeviceNoise noise(dp);
    const size_t row = rng.UniformInt(kItems);
    for (size_t c = 0; c < kDim; ++c) it->x1[i][row * kDim + c] = 2 * rng.NextDouble() - 1;
    noise.AddRound1Noise(it->x1[i], rng);
    it->x2[i] = *noise.Round2Replacement(n, rng);
  }
  it->r1 = SecureSumRequest{0, 1, MinSurvivors(dp), &it->codecs.round1, {}, 0, {}, {}};
  it->r2 = SecureSumRequest{0, 2, MinSurvivors(dp), &it->codecs.round2, {}, 0, {}, {}};
  std::vector<const std::vector<double>*> x1_of, x2_of;
  for (int64_t i = 0; i < n; ++i) {
    x1_of.push_back(&it->x1[i]);
    x2_of.push_back(&it->x2[i]);
  }
  UseInputVectors(it->r1, std::move(x1_of));
  UseInputVectors(it->r2, std::move(x2_of));
  it->r1.drops.assign(n, DropPoint::kNone);
  it->r2.drops.assign(n, DropPoint::kNone);
  return it;
}

// Both rounds once; the summed cost, or an error naming why one aborted.
absl::StatusOr<SecureSumCost> RunStage2(const SecureSumFn& sum, const Stage2Iteration& it) {
  SecureSumCost cost;
  for (const SecureSumRequest* r : {&it.r1, &it.r2}) {
    absl::StatusOr<SecureSumOutcome> out = sum(*r);
    if (!out.ok()) return out.status();
    if (out->aborted) return absl::AbortedError(out->abort_reason);
    cost.Add(out->cost);
  }
  return cost;
}

void ReportCost(benchmark::State& state, const SecureSumCost& cost, int64_t n, size_t len,
                int bits) {
  const char* names[] = {"key_agreement_s", "sharing_s", "masking_s", "unmasking_s"};
  double server = 0;
  for (size_t p = 0; p < 4; ++p) {
    state.counters[names[p]] = cost.client_seconds[p] + cost.server_seconds[p];
    server += cost.server_seconds[p];
    state.counters[std::string("srv_") + names[p]] = cost.server_seconds[p];
  }
  state.counters["server_s"] = server;
  const double dn = static_cast<double>(n);
  state.counters["up_B_per_device"] = static_cast<double>(cost.upload_bytes) / dn;
  state.counters["down_B_per_device"] = static_cast<double>(cost.download_bytes) / dn;
  // What two plaintext uploads of the m x p matrix would take at this width.
  state.counters["plain_up_B"] = 2.0 * static_cast<double>(len * ((bits + 7) / 8));
}

// Both benchmarks below. With `session` the iteration runs inside a
// secure-aggregation session (common/secagg/session.h): the session's setup
// (its first aggregation, with the X25519 agreements) and that first
// iteration run before the timed region and are reported as
// setup_iteration_s; the timed iteration is a later one, which agrees no keys.
void RunStage2Benchmark(benchmark::State& state, bool session) {
  const int64_t n = state.range(0);
  const int bits = static_cast<int>(state.range(3));
  absl::StatusOr<std::unique_ptr<Stage2Iteration>> it = MakeStage2Iteration(n, bits);
  if (!it.ok()) {
    state.SkipWithError(std::string(it.status().message()).c_str());
    return;
  }
  SecAggSumOptions o;
  o.graph = state.range(2) == 1 ? secagg::GraphKind::kHarary : secagg::GraphKind::kComplete;
  o.requirements.dropout_rate = state.range(5) / 100.0;
  o.num_threads = static_cast<int>(state.range(1));
  o.active = state.range(4) == 1;
  o.session = session;
  SecureSumFn sum = MakeSecAggSum(o, random::Csprng::FromSeed(2));
  double setup = 0;
  if (session) {
    const auto t0 = std::chrono::steady_clock::now();
    if (absl::Status s = RunStage2(sum, **it).status(); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  SecureSumCost cost;
  for (auto _ : state) {
    absl::StatusOr<SecureSumCost> c = RunStage2(sum, **it);
    if (!c.ok()) {
      state.SkipWithError(std::string(c.status().message()).c_str());
      return;
    }
    cost = *c;
  }
  ReportCost(state, cost, n, (*it)->len, bits);
  if (session) state.counters["setup_iteration_s"] = setup;
}

void BM_LflStage2Iteration(benchmark::State& state) { RunStage2Benchmark(state, false); }
void BM_LflStage2IterationInSession(benchmark::State& state) { RunStage2Benchmark(state, true); }

BENCHMARK(BM_LflStage2IterationInSession)
    ->ArgNames({"n", "threads", "harary", "bits", "active", "design_dropout_pct"})
    ->Args({943, 2, 1, 32, 0, 30})
    ->Args({1000, 2, 1, 32, 0, 30})
    ->Args({1000, 1, 1, 32, 0, 30})
    ->Args({1000, 2, 1, 32, 1, 30})
    ->Args({1000, 2, 1, 32, 1, 10})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

BENCHMARK(BM_LflStage2Iteration)
    ->ArgNames({"n", "threads", "harary", "bits", "active", "design_dropout_pct"})
    ->Args({943, 2, 1, 32, 0, 30})  // ML-100K: one device per user
    ->Args({943, 2, 1, 64, 0, 30})
    ->Args({1000, 2, 1, 32, 0, 30})
    ->Args({1000, 1, 1, 32, 0, 30})
    // Against an active server (signed keys + consistency check).
    ->Args({943, 2, 1, 32, 1, 30})
    ->Args({1000, 2, 1, 32, 1, 30})
    // ... with k and t designed for 10% / 20% dropout (docs/benchmarks.md).
    ->Args({943, 2, 1, 32, 1, 10})
    ->Args({1000, 2, 1, 32, 1, 10})
    ->Args({943, 2, 1, 32, 1, 20})
    ->Args({1000, 2, 1, 32, 1, 20})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// Not a timing: the parameters the server's LFL job chooses for active
// secure aggregation (server/lfl/lfl_job.cc) when n devices run on `hosts` equal
// hosts (a colluding host is corrupt_rate = 1/hosts of the devices), for a
// design dropout rate; k = 0 means the complete graph (k = n - 1). The
// counters are what docs/benchmarks.md tabulates.
void BM_ActiveSecAggParameters(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  secagg::SecurityRequirements req;
  req.dropout_rate = state.range(1) / 100.0;
  req.adversary = secagg::AdversaryModel::kSemiMalicious;
  req.corrupt_rate = state.range(2) == 0 ? 1.0 / static_cast<double>(n)
                                         : 1.0 / static_cast<double>(state.range(2));
  absl::StatusOr<secagg::GraphParameters> p;
  for (auto _ : state) p = secagg::ChooseSecAggPlusParameters(n, req);
  if (!p.ok()) {
    state.SkipWithError(std::string(p.status().message()).c_str());
    return;
  }
  state.counters["k"] = p->graph == secagg::GraphKind::kHarary ? p->degree : n - 1;
  state.counters["t"] = p->threshold;
  state.counters["complete"] = p->graph == secagg::GraphKind::kComplete ? 1 : 0;
}

BENCHMARK(BM_ActiveSecAggParameters)
    ->ArgNames({"n", "design_dropout_pct", "hosts"})  // hosts 0: one per device
    ->ArgsProduct({{943, 1000}, {10, 20, 30}, {0, 100, 50, 20, 10, 4}})
    ->Iterations(1);

}  // namespace
}  // namespace fedmf::lfl
