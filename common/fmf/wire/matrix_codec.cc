#include "common/fmf/wire/matrix_codec.h"

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

namespace {

std::string Sha256Of(const void* data, size_t bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data), bytes, digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

std::vector<float> ToFloat32(const mf::Matrix& m) {
  std::vector<float> out(static_cast<size_t>(m.size()));
  for (int64_t i = 0; i < m.size(); ++i) out[i] = static_cast<float>(m.data()[i]);
  return out;
}

}  // namespace

std::vector<v1::MatrixChunk> EncodeMatrix(const mf::Matrix& m, const std::string& job_id,
                                          int32_t round, int32_t max_chunk_values,
                                          v1::ValueEncoding encoding) {
  const bool f32 = encoding == v1::VALUE_ENCODING_FLOAT32;
  const std::vector<float> narrow = f32 ? ToFloat32(m) : std::vector<float>();
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
  h->set_encoding(f32 ? v1::VALUE_ENCODING_FLOAT32 : v1::VALUE_ENCODING_FLOAT64);
  h->set_sha256(f32 ? Sha256Of(narrow.data(), narrow.size() * sizeof(float)) : MatrixSha256(m));
  out.push_back(std::move(head));
  for (int32_t i = 0; i < chunks; ++i) {
    const int64_t begin = static_cast<int64_t>(i) * max_chunk_values;
    const int64_t end = std::min<int64_t>(total, begin + max_chunk_values);
    v1::MatrixChunk c;
    c.set_index(i);
    if (f32) {
      c.mutable_values_f32()->Add(narrow.data() + begin, narrow.data() + end);
    } else {
      c.mutable_values()->Add(m.data() + begin, m.data() + end);
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::shared_ptr<const std::vector<v1::MatrixChunk>> EncodedMatrixCache::Encode(
    const mf::Matrix& m, const std::string& job_id, int32_t round) {
  absl::MutexLock lock(&mu_);
  return EncodeLocked(m, job_id, round, nullptr);
}

std::shared_ptr<const std::vector<v1::MatrixChunk>> EncodedMatrixCache::Encode(
    std::shared_ptr<const mf::Matrix> snapshot, const std::string& job_id, int32_t round) {
  absl::MutexLock lock(&mu_);
  if (chunks_ != nullptr && round_ == round && job_id_ == job_id && matrix_ == snapshot) {
    return chunks_;
  }
  const mf::Matrix& m = *snapshot;  // alive: `snapshot` moves into `keep`
  return EncodeLocked(m, job_id, round, std::move(snapshot));
}

std::shared_ptr<const std::vector<v1::MatrixChunk>> EncodedMatrixCache::EncodeLocked(
    const mf::Matrix& m, const std::string& job_id, int32_t round,
    std::shared_ptr<const mf::Matrix> keep) {
  // Exact comparison of the values (finite), not a hash: a stale hit would
  // send another round's matrix under this round's header.
  const bool hit = chunks_ != nullptr && round_ == round && job_id_ == job_id &&
                   matrix_->rows() == m.rows() && matrix_->cols() == m.cols() && *matrix_ == m;
  if (!hit) {
    chunks_ = std::make_shared<const std::vector<v1::MatrixChunk>>(
        EncodeMatrix(m, job_id, round, max_chunk_values_));
    job_id_ = job_id;
    round_ = round;
  }
  if (keep != nullptr) {
    matrix_ = std::move(keep);
  } else if (!hit) {
    matrix_ = std::make_shared<const mf::Matrix>(m);
  }
  return chunks_;
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
    return Fail(
        absl::FailedPreconditionError("field 'index': chunk after the matrix was complete"));
  }
  if (chunk.has_header()) {
    if (has_header_) return Fail(absl::InvalidArgumentError("field 'header': sent twice"));
    const v1::MatrixHeader& h = chunk.header();
    if (h.job_id() != job_id_) {
      return Fail(absl::FailedPreconditionError(absl::StrCat(
          "field 'header.job_id': '", h.job_id(), "' is not the current job '", job_id_, "'")));
    }
    if (h.round() != round_) {
      return Fail(absl::FailedPreconditionError(
          absl::StrCat("field 'header.round': ", h.round(), " is not the current round ", round_)));
    }
    if (h.rows() < 1 || h.cols() < 1 ||
        static_cast<int64_t>(h.rows()) * h.cols() > kMaxMatrixValues) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("field 'header.rows/cols': bad shape ", h.rows(), "x", h.cols())));
    }
    if ((expected_rows_ >= 0 && h.rows() != expected_rows_) ||
        (expected_cols_ >= 0 && h.cols() != expected_cols_)) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("field 'header.rows/cols': shape ",
                                                          h.rows(), "x", h.cols(), ", expected ",
                                                          expected_rows_, "x", expected_cols_)));
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
    if (h.encoding() != v1::VALUE_ENCODING_FLOAT64 && h.encoding() != v1::VALUE_ENCODING_FLOAT32) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("field 'header.encoding': unknown value encoding ", h.encoding())));
    }
    if (chunk.values_size() != 0 || chunk.values_f32_size() != 0) {
      return Fail(absl::InvalidArgumentError("field 'values': the header chunk carries no values"));
    }
    header_ = h;
    has_header_ = true;
    matrix_.resize(h.rows(), h.cols());
    if (h.encoding() == v1::VALUE_ENCODING_FLOAT32) sent_f32_.resize(static_cast<size_t>(total));
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
  const bool f32 = header_.encoding() == v1::VALUE_ENCODING_FLOAT32;
  const char* field = f32 ? "values_f32" : "values";
  const int got = f32 ? chunk.values_f32_size() : chunk.values_size();
  if (got != want || (f32 ? chunk.values_size() : chunk.values_f32_size()) != 0) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("field '", field, "': chunk ", chunk.index(), " has ", got,
                     " values, expected ", want, " (and none in the other encoding's field)")));
  }
  for (int i = 0; i < got; ++i) {
    if (!std::isfinite(f32 ? chunk.values_f32(i) : chunk.values(i))) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("field '", field, "': non-finite value at position ", filled_ + i)));
    }
  }
  if (f32) {
    std::memcpy(sent_f32_.data() + filled_, chunk.values_f32().data(), want * sizeof(float));
    for (int64_t i = 0; i < want; ++i) matrix_.data()[filled_ + i] = chunk.values_f32(i);
  } else {
    std::memcpy(matrix_.data() + filled_, chunk.values().data(), want * sizeof(double));
  }
  filled_ += want;
  bytes_ += want * static_cast<int64_t>(f32 ? sizeof(float) : sizeof(double));
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
  const std::string sha = header_.encoding() == v1::VALUE_ENCODING_FLOAT32
                              ? Sha256Of(sent_f32_.data(), sent_f32_.size() * sizeof(float))
                              : MatrixSha256(matrix_);
  if (sha != header_.sha256()) {
    return Fail(absl::DataLossError("field 'header.sha256': checksum mismatch"));
  }
  finished_ = true;
  return std::move(matrix_);
}

}  // namespace fedmf::net
