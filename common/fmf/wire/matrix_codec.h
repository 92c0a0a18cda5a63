// Dense matrices on the wire: a header (shape, chunk count, SHA-256) and
// bounded chunks, so no message approaches gRPC's 4 MB default limit however
// large the matrix (VFL ships n x p user embeddings).
#ifndef FEDMF_COMMON_FMF_WIRE_MATRIX_CODEC_H_
#define FEDMF_COMMON_FMF_WIRE_MATRIX_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/mf/embeddings.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::net {

// 64 Ki values = 256 KiB (float32) or 512 KiB (float64) of payload per chunk.
inline constexpr int32_t kDefaultMaxChunkValues = 1 << 16;
// Hard cap on what a receiver accepts (rows * cols), 2^28 values = 2 GiB.
inline constexpr int64_t kMaxMatrixValues = int64_t{1} << 28;

// SHA-256 over the little-endian IEEE-754 bytes of the values, row-major.
std::string MatrixSha256(const mf::Matrix& m);

// What fedmf sends: float32 (a DP release rounded to float32 is still the
// same release's post-processing; docs/privacy.md, wire). The protocol
// sessions already round what they share (mf::RoundedToFloat32), so this
// encoding loses nothing. Receivers accept either encoding.
inline constexpr v1::ValueEncoding kWireEncoding = v1::VALUE_ENCODING_FLOAT32;

// Header first (chunk with `header` set and no values), then the value chunks.
std::vector<v1::MatrixChunk> EncodeMatrix(const mf::Matrix& m, const std::string& job_id,
                                          int32_t round, int32_t max_chunk_values,
                                          v1::ValueEncoding encoding = kWireEncoding);

// The chunks of the matrix encoded last, handed out again while the same
// (job, round, values) is asked for: every party of a round, every device
// host of an iteration, downloads the same matrix, and encoding it (a float32
// copy and a SHA-256) once per download was repeated work on the server.
// Thread-safe; a miss encodes under the lock, so the round's first downloads
// wait for one encoding instead of each making its own.
class EncodedMatrixCache {
 public:
  explicit EncodedMatrixCache(int32_t max_chunk_values) : max_chunk_values_(max_chunk_values) {}
  std::shared_ptr<const std::vector<v1::MatrixChunk>> Encode(const mf::Matrix& m,
                                                             const std::string& job_id,
                                                             int32_t round);
  // The same for an immutable snapshot, not null (ServerSession::
  // shared_snapshot): the snapshot encoded last is recognised by its address,
  // without comparing its values (a round's ten hand-overs compared 270 KB
  // each, one after another under the lock), and is kept without a copy.
  std::shared_ptr<const std::vector<v1::MatrixChunk>> Encode(
      std::shared_ptr<const mf::Matrix> snapshot, const std::string& job_id, int32_t round);

 private:
  // Encodes `m` unless its values are cached; holds `keep` (m's own
  // snapshot) for it, or a copy of m when `keep` is null.
  std::shared_ptr<const std::vector<v1::MatrixChunk>> EncodeLocked(
      const mf::Matrix& m, const std::string& job_id, int32_t round,
      std::shared_ptr<const mf::Matrix> keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int32_t max_chunk_values_;
  absl::Mutex mu_;
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  int32_t round_ ABSL_GUARDED_BY(mu_) = 0;
  // Held, so its address cannot stand for another matrix while cached.
  std::shared_ptr<const mf::Matrix> matrix_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const std::vector<v1::MatrixChunk>> chunks_ ABSL_GUARDED_BY(mu_);
};

// Incremental, validating reassembly of one matrix. Every error names the
// field that was wrong; after an error the assembler stays failed.
class MatrixAssembler {
 public:
  // expected_rows/cols < 0 means "any" (checked against kMaxMatrixValues).
  MatrixAssembler(std::string job_id, int32_t round, int32_t expected_rows, int32_t expected_cols,
                  int32_t max_chunk_values);

  absl::Status Add(const v1::MatrixChunk& chunk);
  // All chunks received, checksum matches, every value finite.
  absl::StatusOr<mf::Matrix> Finish();

  bool has_header() const { return has_header_; }
  int64_t bytes_received() const { return bytes_; }

 private:
  absl::Status Fail(absl::Status s);

  std::string job_id_;
  int32_t round_;
  int32_t expected_rows_;
  int32_t expected_cols_;
  int32_t max_chunk_values_;
  bool has_header_ = false;
  // Finish() moves the matrix out; later calls must not see a hollow matrix.
  bool finished_ = false;
  v1::MatrixHeader header_;
  int32_t next_index_ = 0;
  int64_t filled_ = 0;
  int64_t bytes_ = 0;
  mf::Matrix matrix_;
  std::vector<float> sent_f32_;  // float32 chunks as received, for the checksum
  absl::Status error_;
};

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_FMF_WIRE_MATRIX_CODEC_H_
