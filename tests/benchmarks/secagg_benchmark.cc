// One secure aggregation in process (common/secagg/simulate.h): n devices,
// vector length 1682 x 20 = 33640 (ML-100K item-gradient matrix, p = 20),
// 32-bit Z_{2^k}. Counters split the wall time by protocol phase (devices'
// work and server's work separately) and report per-device traffic.
//
//   key_agreement  R0: neighbourhood + two X25519 key pairs per device;
//                  server validates keys and broadcasts neighbourhoods
//   sharing        R1: per neighbour one X25519 + HKDF + Shamir + AES-GCM;
//                  server routes ciphertexts
//   masking        R2: per neighbour one X25519 + HKDF + PRG expansion,
//                  plus PRG(b_i); server sums the masked vectors
//   unmasking      R3: share reveal; server reconstructs b_i / s_sk_j and
//                  removes PRG(b_i) and the dropped devices' pairwise masks
//
// Args: n, design dropout δ in percent (parameters from
// ChooseSecAggPlusParameters / ChooseCompleteGraphParameters), actual dropout
// in percent (spread evenly over the four phase boundaries after
// AdvertiseKeys), device threads (the server is always one thread).
// The reported CPU time is the main thread's only; use the real time.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "common/secagg/mask.h"
#include "common/secagg/parameters.h"
#include "common/secagg/simulate.h"

namespace fedmf::secagg {
namespace {

constexpr size_t kVectorLength = 1682 * 20;

void RunIteration(benchmark::State& state, GraphKind graph, size_t vector_length = kVectorLength,
                  bool signing = false) {
  SimulationSpec spec;
  spec.signing = signing;
  spec.num_devices = static_cast<size_t>(state.range(0));
  spec.vector_length = vector_length;
  spec.bits = 32;
  spec.graph = graph;
  spec.requirements.dropout_rate = static_cast<double>(state.range(1)) / 100.0;
  spec.num_threads = static_cast<int>(state.range(3));
  const size_t drop = spec.num_devices * static_cast<size_t>(state.range(2)) / 100;
  const std::vector<DeviceId> roster = SimulationRoster(spec.num_devices);
  std::vector<DeviceId>* lists[] = {&spec.dropouts.after_advertise, &spec.dropouts.after_share_keys,
                                    &spec.dropouts.after_masked_input,
                                    &spec.dropouts.during_unmasking};
  // Every 7th device, so the dropped ones are spread over the ring order.
  for (size_t d = 0; d < drop; ++d) lists[d % 4]->push_back(roster[(d * 7) % roster.size()]);

  SimulationResult last;
  for (auto _ : state) {
    spec.seed = static_cast<uint64_t>(state.iterations()) + 1;
    auto r = Simulate(spec);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    if (r->server_state != ServerState::kCompleted || r->sum != r->expected_sum) {
      state.SkipWithError("aggregation did not complete with the exact sum");
      return;
    }
    last = std::move(*r);
  }
  const auto& c = last.client_seconds;
  const auto& s = last.server_seconds;
  state.counters["k"] = last.config.graph == GraphKind::kHarary
                            ? last.config.degree
                            : static_cast<double>(last.config.roster.size() - 1);
  state.counters["t"] = last.config.threshold;
  state.counters["key_agreement_s"] = c[kKeyAgreement] + s[kKeyAgreement];
  state.counters["sharing_s"] = c[kSharing] + s[kSharing];
  state.counters["masking_s"] = c[kMasking] + s[kMasking];
  state.counters["unmasking_s"] = c[kUnmasking] + s[kUnmasking];
  state.counters["devices_s"] = c[0] + c[1] + c[2] + c[3];
  state.counters["server_s"] = s[0] + s[1] + s[2] + s[3];
  state.counters["server_unmask_s"] = s[kUnmasking];
  if (signing) {
    state.counters["consistency_s"] =
        last.consistency_client_seconds + last.consistency_server_seconds;
  }
  const double n = static_cast<double>(spec.num_devices);
  state.counters["up_B_per_device"] = static_cast<double>(last.upload_bytes) / n;
  state.counters["down_B_per_device"] = static_cast<double>(last.download_bytes) / n;
}

void BM_SecAggPlusIteration(benchmark::State& state) { RunIteration(state, GraphKind::kHarary); }
// Against an active server (common/secagg/signing.h): signed, certified
// advertisements (one Ed25519 sign per device, two Ed25519 verifies per
// neighbour: credential + advertisement; the server verifies each
// advertisement once) and the consistency-check round (one sign per device,
// one verify at the server and k at each device).
void BM_SecAggPlusIterationActive(benchmark::State& state) {
  RunIteration(state, GraphKind::kHarary, kVectorLength, /*signing=*/true);
}
void BM_CompleteGraphIteration(benchmark::State& state) {
  RunIteration(state, GraphKind::kComplete);
}

// Server time versus n (SecAgg+, 2 device threads, 10% actual dropout so
// the unmasking has pairwise masks to remove). The vector is 1682 entries
// (one p-column of the ML-100K item matrix), not 33640: at n = 16000 the
// devices' PRG work for the full matrix alone would take minutes, and it is
// the per-device crypto and the server's bookkeeping that scale with n.
void BM_SecAggPlusScaling(benchmark::State& state) {
  RunIteration(state, GraphKind::kHarary, 1682);
}

BENCHMARK(BM_SecAggPlusScaling)
    ->ArgNames({"n", "design_dropout_pct", "dropout_pct", "threads"})
    ->Args({250, 30, 10, 2})
    ->Args({1000, 30, 10, 2})
    ->Args({4000, 30, 10, 2})
    ->Args({16000, 30, 10, 2})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

BENCHMARK(BM_SecAggPlusIteration)
    ->ArgNames({"n", "design_dropout_pct", "dropout_pct", "threads"})
    ->Args({100, 30, 10, 2})
    ->Args({250, 30, 10, 2})
    ->Args({943, 30, 10, 2})  // ML-100K: one device per user
    ->Args({1000, 30, 10, 2})
    ->Args({1000, 10, 5, 2})
    ->Args({1000, 30, 10, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

BENCHMARK(BM_SecAggPlusIterationActive)
    ->ArgNames({"n", "design_dropout_pct", "dropout_pct", "threads"})
    ->Args({943, 30, 10, 2})
    ->Args({1000, 30, 10, 2})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// Bonawitz et al.'s complete graph, for comparison: every device masks with
// all n-1 others, so its cost grows linearly in n.
BENCHMARK(BM_CompleteGraphIteration)
    ->ArgNames({"n", "design_dropout_pct", "dropout_pct", "threads"})
    ->Args({100, 30, 10, 2})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// One device's masking kernel: k + 1 masks over the 33640-entry vector in
// Z_{2^32}, term by term (ApplyMask) or fused by L1 block (ApplyMasks, what
// a device runs). Arg: k + 1. bytes_per_second counts keystream bytes.
std::vector<std::vector<uint8_t>> Seeds(size_t count) {
  std::vector<std::vector<uint8_t>> seeds(count, std::vector<uint8_t>(32));
  for (size_t t = 0; t < count; ++t) {
    for (size_t b = 0; b < 32; ++b) seeds[t][b] = static_cast<uint8_t>(31 * t + b);
  }
  return seeds;
}

void BM_ApplyMaskTermByTerm(benchmark::State& state) {
  const auto seeds = Seeds(static_cast<size_t>(state.range(0)));
  std::vector<uint64_t> acc(kVectorLength, 0);
  for (auto _ : state) {
    for (size_t t = 0; t < seeds.size(); ++t) {
      if (!ApplyMask(seeds[t], 32, t % 2 ? crypto::MaskSign::kAdd : crypto::MaskSign::kSubtract,
                     acc)
               .ok()) {
        state.SkipWithError("ApplyMask failed");
        return;
      }
    }
    benchmark::DoNotOptimize(acc.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * kVectorLength * 4);
}
BENCHMARK(BM_ApplyMaskTermByTerm)->Arg(35);

void BM_ApplyMasksFused(benchmark::State& state) {
  const auto seeds = Seeds(static_cast<size_t>(state.range(0)));
  std::vector<MaskTerm> terms;
  for (size_t t = 0; t < seeds.size(); ++t) {
    terms.push_back({seeds[t], t % 2 ? crypto::MaskSign::kAdd : crypto::MaskSign::kSubtract});
  }
  std::vector<uint64_t> acc(kVectorLength, 0);
  for (auto _ : state) {
    if (!ApplyMasks(terms, 32, acc).ok()) {
      state.SkipWithError("ApplyMasks failed");
      return;
    }
    benchmark::DoNotOptimize(acc.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * kVectorLength * 4);
}
BENCHMARK(BM_ApplyMasksFused)->Arg(35);

}  // namespace
}  // namespace fedmf::secagg
