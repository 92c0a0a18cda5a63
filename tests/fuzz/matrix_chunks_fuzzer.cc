// The server's reassembly of an uploaded matrix (CoordinatorService::
// UploadUpdate -> net::MatrixAssembler) on an arbitrary stream of chunks.
// Input: [shape byte][chunk-size byte] then records, each a serialized
// v1::MatrixChunk (tests/fuzz/fuzz_input.h). The shape is pinned as the
// server pins it (JobCoordinator::UploadShape), never "any".
// Properties: no crash; a matrix that Finish() accepts has the pinned shape,
// only finite values, and re-encodes to chunks that reassemble to the same
// bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/fmf/wire/matrix_codec.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

constexpr char kJob[] = "job";
constexpr int32_t kRound = 3;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fedmf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fedmf::fuzz::FuzzInput in(data, size);
  const uint8_t shape = in.Byte();
  const int32_t rows = 1 + shape % 8;
  const int32_t cols = 1 + (shape / 8) % 8;
  const int32_t max_chunk = 1 + in.Byte() % 16;
  fedmf::net::MatrixAssembler assembler(kJob, kRound, rows, cols, max_chunk);
  while (!in.empty()) {
    fedmf::v1::MatrixChunk chunk;
    if (!in.Parse(&chunk)) continue;
    if (!assembler.Add(chunk).ok()) break;  // the server ends the upload here
  }
  auto m = assembler.Finish();
  if (!m.ok()) return 0;
  if (m->rows() != rows || m->cols() != cols) __builtin_trap();
  for (int64_t i = 0; i < m->size(); ++i) {
    if (!std::isfinite(m->data()[i])) __builtin_trap();
  }
  // float64 re-encodes whatever was accepted (either encoding) bit-exactly.
  fedmf::net::MatrixAssembler again(kJob, kRound, rows, cols, max_chunk);
  for (const auto& c :
       fedmf::net::EncodeMatrix(*m, kJob, kRound, max_chunk, fedmf::v1::VALUE_ENCODING_FLOAT64)) {
    if (!again.Add(c).ok()) __builtin_trap();
  }
  auto m2 = again.Finish();
  if (!m2.ok() || std::memcmp(m2->data(), m->data(), m->size() * sizeof(double)) != 0) {
    __builtin_trap();
  }
  return 0;
}
