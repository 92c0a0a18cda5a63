#include "common/net/matrix_codec.h"

#include <openssl/sha.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fedmf::net {

static_assert(std::endian::native == std::endian::little,
              "the wire checksum assumes a little-endian host");

std::string MatrixSha256(const mf::Matrix& m) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(m.data()),
         static_cast<size_t>(m.size()) * sizeof(double), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

std::vector<v1::MatrixChunk> EncodeMatrix(const mf::Matrix& m, const std::string& job_id,
                                          int32_t round, int32_t max_chunk_values) {
  max_chunk_values = std::max(1, max_chunk_values);
  const int64_t total = m.size();
  const int32_t chunks = static_cast<int32_t>((total + max_chunk_values - 1) / max_chunk_values);
  std::vector<v1::MatrixChunk> out;
  out.reserve(chunks + 1);
  v1::MatrixChunk head;
  v1::MatrixHeader* h = head.mutable_header();
  h->set_job_id(job_id);
  h->set_round(round);
  h->set_rows(static_cast<int32_t>(m.rows()));
  h->set_cols(static_cast<int32_t>(m.cols()));
  h->set_total_chunks(chunks);
  h->set_sha256(MatrixSha256(m));
  out.push_back(std::move(head));
  for (int32_t i = 0; i < chunks; ++i) {
    const int64_t begin = static_cast<int64_t>(i) * max_chunk_values;
    const int64_t end = std::min<int64_t>(total, begin + max_chunk_values);
    v1::MatrixChunk c;
    c.set_index(i);
    c.mutable_values()->Add(m.data() + begin, m.data() + end);
    out.push_back(std::move(c));
  }
  return out;
}

MatrixAssembler::MatrixAssembler(std::string job_id, int32_t round, int32_t expected_rows,
                                 int32_t expected_cols, int32_t max_chunk_values)
    : job_id_(std::move(job_id)),
      round_(round),
      expected_rows_(expected_rows),
      expected_cols_(expected_cols),
      max_chunk_values_(std::max(1, max_chunk_values)) {}

absl::Status MatrixAssembler::Fail(absl::Status s) {
  error_ = s;
  return s;
}

absl::Status MatrixAssembler::Add(const v1::MatrixChunk& chunk) {
  if (!error_.ok()) return error_;
  if (finished_) {
    return Fail(absl::FailedPreconditionError("field 'index': chunk after the matrix was complete"));
  }
  if (chunk.has_header()) {
    if (has_header_) return Fail(absl::InvalidArgumentError("field 'header': sent twice"));
    const v1::MatrixHeader& h = chunk.header();
    if (h.job_id() != job_id_) {
      return Fail(absl::FailedPreconditionError(
          absl::StrCat("field 'header.job_id': '", h.job_id(), "' is not the current job '",
                       job_id_, "'")));
    }
    if (h.round() != round_) {
      return Fail(absl::FailedPreconditionError(absl::StrCat(
          "field 'header.round': ", h.round(), " is not the current round ", round_)));
    }
    if (h.rows() < 1 || h.cols() < 1 ||
        static_cast<int64_t>(h.rows()) * h.cols() > kMaxMatrixValues) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("field 'header.rows/cols': bad shape ", h.rows(), "x", h.cols())));
    }
    if ((expected_rows_ >= 0 && h.rows() != expected_rows_) ||
        (expected_cols_ >= 0 && h.cols() != expected_cols_)) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("field 'header.rows/cols': shape ", h.rows(), "x", h.cols(),
                       ", expected ", expected_rows_, "x", expected_cols_)));
    }
    const int64_t total = static_cast<int64_t>(h.rows()) * h.cols();
    const int64_t want_chunks = (total + max_chunk_values_ - 1) / max_chunk_values_;
    if (h.total_chunks() != want_chunks) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("field 'header.total_chunks': ", h.total_chunks(), ", expected ",
                       want_chunks, " chunks of at most ", max_chunk_values_, " values")));
    }
    if (h.sha256().size() != SHA256_DIGEST_LENGTH) {
      return Fail(absl::InvalidArgumentError("field 'header.sha256': must be 32 bytes"));
    }
    if (chunk.values_size() != 0) {
      return Fail(absl::InvalidArgumentError("field 'values': the header chunk carries no values"));
    }
    header_ = h;
    has_header_ = true;
    matrix_.resize(h.rows(), h.cols());
    return absl::OkStatus();
  }
  if (!has_header_) return Fail(absl::InvalidArgumentError("field 'header': must come first"));
  // Without this an empty chunk past the end would pass the size check below
  // (zero values remain) and the error would surface only at Finish().
  if (chunk.index() >= header_.total_chunks()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "field 'index': chunk ", chunk.index(), " beyond total_chunks ", header_.total_chunks())));
  }
  if (chunk.index() != next_index_) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("field 'index': got chunk ", chunk.index(), ", expected ", next_index_)));
  }
  const int64_t total = matrix_.size();
  const int64_t want = std::min<int64_t>(max_chunk_values_, total - filled_);
  if (chunk.values_size() != want) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "field 'values': chunk ", chunk.index(), " has ", chunk.values_size(),
        " values, expected ", want)));
  }
  for (int i = 0; i < chunk.values_size(); ++i) {
    if (!std::isfinite(chunk.values(i))) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "field 'values': non-finite value at position ", filled_ + i)));
    }
  }
  std::memcpy(matrix_.data() + filled_, chunk.values().data(), want * sizeof(double));
  filled_ += want;
  bytes_ += want * static_cast<int64_t>(sizeof(double));
  ++next_index_;
  return absl::OkStatus();
}

absl::StatusOr<mf::Matrix> MatrixAssembler::Finish() {
  if (!error_.ok()) return error_;
  if (finished_) return Fail(absl::FailedPreconditionError("Finish() called twice"));
  if (!has_header_) return Fail(absl::InvalidArgumentError("field 'header': never received"));
  if (next_index_ != header_.total_chunks() || filled_ != matrix_.size()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "field 'index': received ", next_index_, " of ", header_.total_chunks(), " chunks")));
  }
  if (MatrixSha256(matrix_) != header_.sha256()) {
    return Fail(absl::DataLossError("field 'header.sha256': checksum mismatch"));
  }
  finished_ = true;
  return std::move(matrix_);
}

}  // namespace fedmf::net
