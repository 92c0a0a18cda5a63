// Bytes on the wire per synchronization: encoding a shared matrix into
// fedmf.v1 chunks (what one party downloads, and uploads, per round).
// Shapes: ML-100K HFL (1682 items) / VFL (943 users), and the FMF paper's
// Figure 2 scale, MovieLens 10M: HFL m = 10677, VFL n = 69878, p = 20.
#include <benchmark/benchmark.h>

#include "common/fmf/wire/matrix_codec.h"

namespace {

// range(1): 1 = float32 (what fedmf sends), 0 = float64 (the encoding
// before it, kept for comparison).
fedmf::v1::ValueEncoding EncodingOf(const benchmark::State& state) {
  return state.range(1) == 1 ? fedmf::v1::VALUE_ENCODING_FLOAT32
                             : fedmf::v1::VALUE_ENCODING_FLOAT64;
}
int64_t BytesPerValue(const benchmark::State& state) { return state.range(1) == 1 ? 4 : 8; }

void BM_EncodeSharedMatrix(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  fedmf::mf::Matrix m = fedmf::mf::Matrix::Constant(rows, 20, 0.25);
  int64_t bytes = 0;
  for (auto _ : state) {
    auto chunks = fedmf::net::EncodeMatrix(m, "job", 3, fedmf::net::kDefaultMaxChunkValues,
                                           EncodingOf(state));
    bytes = 0;
    for (const auto& c : chunks) bytes += static_cast<int64_t>(c.ByteSizeLong());
    benchmark::DoNotOptimize(chunks);
  }
  state.counters["wire_bytes_one_way"] = static_cast<double>(bytes);
  state.counters["payload_bytes"] = static_cast<double>(m.size() * BytesPerValue(state));
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_EncodeSharedMatrix)->ArgsProduct({{943, 1682, 10677, 69878}, {1, 0}});

void BM_AssembleSharedMatrix(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  fedmf::mf::Matrix m = fedmf::mf::Matrix::Constant(rows, 20, 0.25);
  auto chunks =
      fedmf::net::EncodeMatrix(m, "job", 3, fedmf::net::kDefaultMaxChunkValues, EncodingOf(state));
  for (auto _ : state) {
    fedmf::net::MatrixAssembler a("job", 3, rows, 20, fedmf::net::kDefaultMaxChunkValues);
    for (const auto& c : chunks) benchmark::DoNotOptimize(a.Add(c));
    benchmark::DoNotOptimize(a.Finish());
  }
  state.SetBytesProcessed(state.iterations() * m.size() * BytesPerValue(state));
}
BENCHMARK(BM_AssembleSharedMatrix)->ArgsProduct({{1682, 69878}, {1, 0}});

}  // namespace
