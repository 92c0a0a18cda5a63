// The party's side of transport_benchmark's round, shared with its
// transport_party helper (the same exchange from a process of its own).
#ifndef FEDMF_TESTS_BENCHMARKS_TRANSPORT_EXCHANGE_H_
#define FEDMF_TESTS_BENCHMARKS_TRANSPORT_EXCHANGE_H_

#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <cstdlib>
#include <vector>

#include "common/fmf/wire/matrix_codec.h"
#include "common/mf/embeddings.h"
#include "fedmf/v1/federation.grpc.pb.h"

namespace fedmf::bench {

inline constexpr int kCols = 20;

// User + system CPU of this process so far (every thread).
inline double ProcessCpuSeconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

// The party's side of a round on the wire: encode the release (float32 and
// its SHA-256), stream it with the hand-over asked for, reassemble and check
// the shared matrix of the answer.
inline void Exchange(v1::Coordinator::Stub& stub, const mf::Matrix& release) {
  std::vector<v1::MatrixChunk> chunks =
      net::EncodeMatrix(release, "job", 0, net::kDefaultMaxChunkValues);
  chunks.front().set_await_next_task(true);
  grpc::ClientContext ctx;
  v1::UploadResponse response;
  auto writer = stub.UploadUpdate(&ctx, &response);
  for (const v1::MatrixChunk& c : chunks) {
    if (!writer->Write(c)) break;
  }
  writer->WritesDone();
  if (!writer->Finish().ok() || !response.accepted()) std::abort();
  net::MatrixAssembler assembler("job", 1, release.rows(), kCols, net::kDefaultMaxChunkValues);
  for (const v1::MatrixChunk& c : response.next_task().shared()) {
    if (!assembler.Add(c).ok()) std::abort();
  }
  auto shared = assembler.Finish();
  if (!shared.ok()) std::abort();
  if (shared->rows() != release.rows()) std::abort();
}

}  // namespace fedmf::bench

#endif  // FEDMF_TESTS_BENCHMARKS_TRANSPORT_EXCHANGE_H_
