#include "common/fmf/wire/matrix_codec.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::net {
namespace {

using ::testing::HasSubstr;

constexpr char kJob[] = "job-1";
constexpr int32_t kRound = 3;

// Distinct, non-trivial values so a swapped or shifted chunk changes the result.
mf::Matrix MakeMatrix(int rows, int cols) {
  mf::Matrix m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m(r, c) = 0.5 * r - 0.25 * c + 1e-3 * r * c + 1.0 / (r + c + 3);
  }
  return m;
}

void ExpectError(const absl::Status& s, absl::StatusCode code, const std::string& field) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(field)) << s;
}

struct Shape {
  int rows;
  int cols;
  int32_t chunk;
};

class RoundTripTest : public ::testing::TestWithParam<std::tuple<Shape, v1::ValueEncoding>> {};

TEST_P(RoundTripTest, DecodesWhatWasEncoded) {
  const Shape p = std::get<0>(GetParam());
  const v1::ValueEncoding encoding = std::get<1>(GetParam());
  const bool f32 = encoding == v1::VALUE_ENCODING_FLOAT32;
  const mf::Matrix m = MakeMatrix(p.rows, p.cols);
  // float32 rounds each value to the nearest float; float64 is bit-exact.
  const mf::Matrix want = f32 ? mf::Matrix(m.cast<float>().cast<double>()) : m;
  if (f32) ASSERT_FALSE(want == m);  // the rounding is visible on these values
  const auto chunks = EncodeMatrix(m, kJob, kRound, p.chunk, encoding);

  const int64_t total = int64_t{p.rows} * p.cols;
  const int64_t want_chunks = (total + p.chunk - 1) / p.chunk;
  ASSERT_EQ(static_cast<int64_t>(chunks.size()), want_chunks + 1);
  ASSERT_TRUE(chunks[0].has_header());
  EXPECT_EQ(chunks[0].values_size(), 0);
  EXPECT_EQ(chunks[0].header().job_id(), kJob);
  EXPECT_EQ(chunks[0].header().round(), kRound);
  EXPECT_EQ(chunks[0].header().rows(), p.rows);
  EXPECT_EQ(chunks[0].header().cols(), p.cols);
  EXPECT_EQ(chunks[0].header().total_chunks(), want_chunks);
  EXPECT_EQ(chunks[0].header().sha256().size(), 32u);
  EXPECT_EQ(chunks[0].header().encoding(), encoding);
  for (size_t i = 1; i < chunks.size(); ++i) {
    EXPECT_FALSE(chunks[i].has_header());
    EXPECT_EQ(chunks[i].index(), static_cast<int32_t>(i - 1));
    EXPECT_LE(f32 ? chunks[i].values_f32_size() : chunks[i].values_size(), p.chunk);
    EXPECT_EQ(f32 ? chunks[i].values_size() : chunks[i].values_f32_size(), 0);
    // Far below gRPC's 4 MB default message limit.
    EXPECT_LT(chunks[i].ByteSizeLong(), size_t{1} << 20);
  }

  MatrixAssembler a(kJob, kRound, p.rows, p.cols, p.chunk);
  EXPECT_FALSE(a.has_header());
  for (const auto& c : chunks) ASSERT_TRUE(a.Add(c).ok());
  EXPECT_TRUE(a.has_header());
  EXPECT_EQ(a.bytes_received(), total * (f32 ? 4 : 8));
  ASSERT_OK_AND_ASSIGN(auto out, a.Finish());
  ASSERT_EQ(out.rows(), p.rows);
  ASSERT_EQ(out.cols(), p.cols);
  EXPECT_TRUE(out == want);

  // An assembler that accepts any shape gets the same matrix.
  MatrixAssembler any(kJob, kRound, -1, -1, p.chunk);
  for (const auto& c : chunks) ASSERT_TRUE(any.Add(c).ok());
  ASSERT_OK_AND_ASSIGN(auto out2, any.Finish());
  EXPECT_TRUE(out2 == want);

  // A matrix already at float32 precision (what the protocol sessions
  // share) crosses either encoding bit-exactly, so the encoding loses nothing.
  const mf::Matrix shared = mf::RoundedToFloat32(m);
  MatrixAssembler again(kJob, kRound, p.rows, p.cols, p.chunk);
  for (const auto& c : EncodeMatrix(shared, kJob, kRound, p.chunk, encoding)) {
    ASSERT_THAT(again.Add(c), IsOk());
  }
  ASSERT_OK_AND_ASSIGN(auto out3, again.Finish());
  EXPECT_TRUE(out3 == shared);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RoundTripTest,
    ::testing::Combine(::testing::Values(Shape{1, 1, kDefaultMaxChunkValues},
                                         Shape{7, 3, 4},  // 21 values: 5 full + 1 of 1
                                         Shape{1682, 20, kDefaultMaxChunkValues},
                                         // 100000 values: one full default chunk + a partial one
                                         Shape{5000, 20, kDefaultMaxChunkValues}, Shape{4, 4, 1},
                                         Shape{4, 4, 16}, Shape{4, 4, 1000}),
                       ::testing::Values(v1::VALUE_ENCODING_FLOAT64, v1::VALUE_ENCODING_FLOAT32)));

TEST(WireEncodingTest, FedmfSendsFloat32ByDefault) {
  const auto chunks = EncodeMatrix(MakeMatrix(7, 3), kJob, kRound, 4);
  EXPECT_EQ(chunks[0].header().encoding(), v1::VALUE_ENCODING_FLOAT32);
  EXPECT_EQ(chunks[1].values_f32_size(), 4);
  EXPECT_EQ(chunks[1].values_size(), 0);
}

// The cache hands out the same chunks while job, round and values are the
// same, and encodes again when any of them changes.
TEST(EncodedMatrixCacheTest, ReusesTheChunksOnlyForTheSameJobRoundAndValues) {
  EncodedMatrixCache cache(/*max_chunk_values=*/7);
  const mf::Matrix m = mf::RoundedToFloat32(MakeMatrix(5, 4));
  const auto first = cache.Encode(m, kJob, kRound);
  ASSERT_NE(first, nullptr);
  const std::vector<v1::MatrixChunk> direct = EncodeMatrix(m, kJob, kRound, 7);
  ASSERT_EQ(first->size(), direct.size());
  for (size_t i = 0; i < direct.size(); ++i) {
    EXPECT_EQ((*first)[i].SerializeAsString(), direct[i].SerializeAsString()) << i;
  }
  EXPECT_EQ(cache.Encode(m, kJob, kRound), first);  // the same object: no new encoding

  mf::Matrix changed = m;
  changed(4, 3) += 1;
  const auto other_values = cache.Encode(changed, kJob, kRound);
  EXPECT_NE(other_values, first);
  EXPECT_NE(other_values->front().header().sha256(), first->front().header().sha256());
  const auto other_round = cache.Encode(changed, kJob, kRound + 1);
  EXPECT_NE(other_round, other_values);
  EXPECT_EQ(other_round->front().header().round(), kRound + 1);
  const auto other_job = cache.Encode(changed, "job-2", kRound + 1);
  EXPECT_NE(other_job, other_round);
  EXPECT_EQ(other_job->front().header().job_id(), "job-2");
  const auto other_shape =
      cache.Encode(mf::RoundedToFloat32(MakeMatrix(4, 5)), "job-2", kRound + 1);
  EXPECT_EQ(other_shape->front().header().rows(), 4);
}

// A snapshot is recognised by its address while it is the one cached; any
// other object, even for the same job and round, is judged by its values, so
// a new round's matrix is never sent under an old encoding.
TEST(EncodedMatrixCacheTest, ASnapshotIsReusedByAddressAndAnotherObjectByItsValues) {
  EncodedMatrixCache cache(/*max_chunk_values=*/7);
  const auto DigestOf = [](const mf::Matrix& m) {
    return EncodeMatrix(m, kJob, kRound, 7).front().header().sha256();
  };
  auto snapshot = std::make_shared<const mf::Matrix>(mf::RoundedToFloat32(MakeMatrix(5, 4)));
  const auto first = cache.Encode(snapshot, kJob, kRound);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->front().header().sha256(), DigestOf(*snapshot));
  EXPECT_EQ(cache.Encode(snapshot, kJob, kRound), first);
  // Equal values in another object (or handed in as values): the same chunks.
  EXPECT_EQ(cache.Encode(std::make_shared<const mf::Matrix>(*snapshot), kJob, kRound), first);
  EXPECT_EQ(cache.Encode(*snapshot, kJob, kRound), first);
  // Other values under the same job and round: encoded again, and then the
  // first snapshot is judged by its values too.
  mf::Matrix changed = *snapshot;
  changed(0, 0) += 1;
  auto next = std::make_shared<const mf::Matrix>(changed);
  const auto second = cache.Encode(next, kJob, kRound);
  EXPECT_NE(second, first);
  EXPECT_EQ(second->front().header().sha256(), DigestOf(changed));
  EXPECT_EQ(cache.Encode(next, kJob, kRound), second);
  const auto back = cache.Encode(snapshot, kJob, kRound);
  EXPECT_NE(back, second);
  EXPECT_EQ(back->front().header().sha256(), DigestOf(*snapshot));
  // The same snapshot under another round is another encoding.
  EXPECT_EQ(cache.Encode(snapshot, kJob, kRound + 1)->front().header().round(), kRound + 1);
}

TEST(MatrixSha256Test, DependsOnEveryValue) {
  mf::Matrix m = MakeMatrix(3, 2);
  const std::string before = MatrixSha256(m);
  EXPECT_EQ(before.size(), 32u);
  m(2, 1) = std::nextafter(m(2, 1), 1e9);
  EXPECT_NE(MatrixSha256(m), before);
}

// 7x3 with chunks of 4: header + 6 chunks, the last carrying one value.
class AssemblerErrorTest : public ::testing::Test {
 protected:
  AssemblerErrorTest()
      : m_(MakeMatrix(7, 3)),
        chunks_(EncodeMatrix(m_, kJob, kRound, 4, v1::VALUE_ENCODING_FLOAT64)) {}
  MatrixAssembler Make() { return MatrixAssembler(kJob, kRound, 7, 3, 4); }

  mf::Matrix m_;
  std::vector<v1::MatrixChunk> chunks_;
};

TEST_F(AssemblerErrorTest, ChunkBeforeHeader) {
  auto a = Make();
  ExpectError(a.Add(chunks_[1]), absl::StatusCode::kInvalidArgument, "'header'");
}

TEST_F(AssemblerErrorTest, HeaderTwice) {
  auto a = Make();
  ASSERT_THAT(a.Add(chunks_[0]), IsOk());
  ExpectError(a.Add(chunks_[0]), absl::StatusCode::kInvalidArgument, "'header'");
}

TEST_F(AssemblerErrorTest, WrongJobId) {
  MatrixAssembler a("job-2", kRound, 7, 3, 4);
  ExpectError(a.Add(chunks_[0]), absl::StatusCode::kFailedPrecondition, "'header.job_id'");
}

TEST_F(AssemblerErrorTest, StaleOrReplayedRound) {
  MatrixAssembler later(kJob, kRound + 1, 7, 3, 4);  // a replay of the previous round
  ExpectError(later.Add(chunks_[0]), absl::StatusCode::kFailedPrecondition, "'header.round'");
  MatrixAssembler earlier(kJob, kRound - 1, 7, 3, 4);
  ExpectError(earlier.Add(chunks_[0]), absl::StatusCode::kFailedPrecondition, "'header.round'");
}

TEST_F(AssemblerErrorTest, WrongShapeVsExpected) {
  MatrixAssembler rows(kJob, kRound, 8, 3, 4);
  ExpectError(rows.Add(chunks_[0]), absl::StatusCode::kInvalidArgument, "'header.rows/cols'");
  MatrixAssembler cols(kJob, kRound, 7, -1, 4);  // only rows pinned: fine
  EXPECT_THAT(cols.Add(chunks_[0]), IsOk());
  MatrixAssembler transposed(kJob, kRound, 3, 7, 4);
  ExpectError(transposed.Add(chunks_[0]), absl::StatusCode::kInvalidArgument, "'header.rows/cols'");
}

TEST_F(AssemblerErrorTest, NonPositiveShape) {
  for (auto [r, c] : {std::pair{0, 3}, {7, 0}, {-1, 3}, {7, -5}}) {
    v1::MatrixChunk h = chunks_[0];
    h.mutable_header()->set_rows(r);
    h.mutable_header()->set_cols(c);
    MatrixAssembler a(kJob, kRound, -1, -1, 4);
    ExpectError(a.Add(h), absl::StatusCode::kInvalidArgument, "'header.rows/cols'");
  }
}

TEST_F(AssemblerErrorTest, OversizedShape) {
  v1::MatrixChunk h = chunks_[0];
  h.mutable_header()->set_rows(1 << 15);
  h.mutable_header()->set_cols(1 << 14);  // 2^29 values > kMaxMatrixValues
  h.mutable_header()->set_total_chunks(1 << 13);
  MatrixAssembler a(kJob, kRound, -1, -1, kDefaultMaxChunkValues);
  ExpectError(a.Add(h), absl::StatusCode::kInvalidArgument, "'header.rows/cols'");
  // int32 overflow of rows*cols must not sneak past the cap.
  h.mutable_header()->set_rows(std::numeric_limits<int32_t>::max());
  h.mutable_header()->set_cols(std::numeric_limits<int32_t>::max());
  MatrixAssembler b(kJob, kRound, -1, -1, kDefaultMaxChunkValues);
  ExpectError(b.Add(h), absl::StatusCode::kInvalidArgument, "'header.rows/cols'");
}

TEST_F(AssemblerErrorTest, WrongTotalChunks) {
  for (int32_t n : {0, 5, 7, -1}) {
    v1::MatrixChunk h = chunks_[0];
    h.mutable_header()->set_total_chunks(n);
    auto a = Make();
    ExpectError(a.Add(h), absl::StatusCode::kInvalidArgument, "'header.total_chunks'");
  }
  // The same stream is wrong for a receiver with a different chunk limit.
  MatrixAssembler other(kJob, kRound, 7, 3, 8);
  ExpectError(other.Add(chunks_[0]), absl::StatusCode::kInvalidArgument, "'header.total_chunks'");
}

TEST_F(AssemblerErrorTest, BadChecksumLength) {
  v1::MatrixChunk h = chunks_[0];
  h.mutable_header()->set_sha256("short");
  auto a = Make();
  ExpectError(a.Add(h), absl::StatusCode::kInvalidArgument, "'header.sha256'");
}

TEST_F(AssemblerErrorTest, HeaderWithValues) {
  v1::MatrixChunk h = chunks_[0];
  h.add_values(1.0);
  auto a = Make();
  ExpectError(a.Add(h), absl::StatusCode::kInvalidArgument, "'values'");
}

TEST_F(AssemblerErrorTest, WrongValueCount) {
  {
    auto a = Make();
    ASSERT_THAT(a.Add(chunks_[0]), IsOk());
    v1::MatrixChunk c = chunks_[1];
    c.add_values(0.0);  // 5 > 4
    ExpectError(a.Add(c), absl::StatusCode::kInvalidArgument, "'values'");
  }
  {
    auto a = Make();
    ASSERT_THAT(a.Add(chunks_[0]), IsOk());
    v1::MatrixChunk c = chunks_[1];
    c.mutable_values()->RemoveLast();  // a short chunk that is not the last
    ExpectError(a.Add(c), absl::StatusCode::kInvalidArgument, "'values'");
  }
  {
    auto a = Make();
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(a.Add(chunks_[i]).ok());
    v1::MatrixChunk last = chunks_[6];
    ASSERT_EQ(last.values_size(), 1);
    last.add_values(0.0);  // the final partial chunk must be exactly 1 value
    ExpectError(a.Add(last), absl::StatusCode::kInvalidArgument, "'values'");
  }
}

TEST_F(AssemblerErrorTest, UnknownEncoding) {
  v1::MatrixChunk h = chunks_[0];
  h.mutable_header()->set_encoding(static_cast<v1::ValueEncoding>(7));
  auto a = Make();
  ExpectError(a.Add(h), absl::StatusCode::kInvalidArgument, "'header.encoding'");
}

// The float32 stream's own checks: values in its field only, each finite,
// the checksum over the float bytes as sent.
class Float32AssemblerTest : public ::testing::Test {
 protected:
  Float32AssemblerTest()
      : chunks_(EncodeMatrix(MakeMatrix(7, 3), kJob, kRound, 4, v1::VALUE_ENCODING_FLOAT32)) {}
  MatrixAssembler Make() { return MatrixAssembler(kJob, kRound, 7, 3, 4); }
  std::vector<v1::MatrixChunk> chunks_;
};

TEST_F(Float32AssemblerTest, WrongValueCountOrField) {
  {
    auto a = Make();
    ASSERT_THAT(a.Add(chunks_[0]), IsOk());
    v1::MatrixChunk c = chunks_[1];
    c.add_values_f32(0.0f);  // 5 > 4
    ExpectError(a.Add(c), absl::StatusCode::kInvalidArgument, "'values_f32'");
  }
  {
    auto a = Make();
    ASSERT_THAT(a.Add(chunks_[0]), IsOk());
    v1::MatrixChunk c = chunks_[1];
    c.add_values(0.0);  // right count in values_f32, plus a stray double
    ExpectError(a.Add(c), absl::StatusCode::kInvalidArgument, "none in the other encoding");
  }
  {
    auto a = Make();
    ASSERT_THAT(a.Add(chunks_[0]), IsOk());
    v1::MatrixChunk c;
    c.set_index(0);
    for (float f : chunks_[1].values_f32()) c.add_values(f);  // doubles under a float32 header
    ExpectError(a.Add(c), absl::StatusCode::kInvalidArgument, "'values_f32'");
  }
}

TEST_F(Float32AssemblerTest, NonFiniteValues) {
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    auto a = Make();
    ASSERT_THAT(a.Add(chunks_[0]), IsOk());
    v1::MatrixChunk c = chunks_[1];
    c.set_values_f32(2, bad);
    ExpectError(a.Add(c), absl::StatusCode::kInvalidArgument, "'values_f32'");
  }
}

TEST_F(Float32AssemblerTest, ChecksumMismatch) {
  auto a = Make();
  std::vector<v1::MatrixChunk> tampered = chunks_;
  const float f = tampered[3].values_f32(1);
  tampered[3].set_values_f32(1, std::nextafter(f, 1e9f));  // one ulp
  for (const auto& c : tampered) ASSERT_TRUE(a.Add(c).ok());
  ExpectError(a.Finish().status(), absl::StatusCode::kDataLoss, "'header.sha256'");
}

TEST_F(AssemblerErrorTest, OutOfOrderIndex) {
  auto a = Make();
  ASSERT_THAT(a.Add(chunks_[0]), IsOk());
  ExpectError(a.Add(chunks_[2]), absl::StatusCode::kInvalidArgument, "'index'");
}

TEST_F(AssemblerErrorTest, DuplicateIndex) {
  auto a = Make();
  ASSERT_THAT(a.Add(chunks_[0]), IsOk());
  ASSERT_THAT(a.Add(chunks_[1]), IsOk());
  ExpectError(a.Add(chunks_[1]), absl::StatusCode::kInvalidArgument, "'index'");
}

TEST_F(AssemblerErrorTest, IndexBeyondTotal) {
  auto a = Make();
  for (const auto& c : chunks_) ASSERT_TRUE(a.Add(c).ok());
  v1::MatrixChunk extra;
  extra.set_index(6);  // empty: would match "zero values remain"
  ExpectError(a.Add(extra), absl::StatusCode::kInvalidArgument, "'index'");
}

TEST_F(AssemblerErrorTest, NonFiniteValues) {
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    auto a = Make();
    ASSERT_THAT(a.Add(chunks_[0]), IsOk());
    v1::MatrixChunk c = chunks_[1];
    c.set_values(2, bad);
    ExpectError(a.Add(c), absl::StatusCode::kInvalidArgument, "'values'");
  }
}

TEST_F(AssemblerErrorTest, ChecksumMismatch) {
  auto a = Make();
  std::vector<v1::MatrixChunk> tampered = chunks_;
  tampered[3].set_values(1, tampered[3].values(1) + 1e-12);
  for (const auto& c : tampered) ASSERT_TRUE(a.Add(c).ok());
  auto out = a.Finish();
  ASSERT_THAT(out, StatusIs(absl::StatusCode::kDataLoss));
  // Corruption in transit, not a malformed request: DATA_LOSS.
  ExpectError(out.status(), absl::StatusCode::kDataLoss, "'header.sha256'");
}

TEST_F(AssemblerErrorTest, MissingChunksAtFinish) {
  auto a = Make();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(a.Add(chunks_[i]).ok());  // last chunk missing
  auto out = a.Finish();
  ASSERT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument));
  ExpectError(out.status(), absl::StatusCode::kInvalidArgument, "'index'");
}

TEST_F(AssemblerErrorTest, NothingReceivedAtFinish) {
  auto a = Make();
  auto out = a.Finish();
  ASSERT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument));
  ExpectError(out.status(), absl::StatusCode::kInvalidArgument, "'header'");
}

TEST_F(AssemblerErrorTest, StaysFailedAfterAnError) {
  auto a = Make();
  ASSERT_THAT(a.Add(chunks_[0]), IsOk());
  ASSERT_THAT(a.Add(chunks_[1]), IsOk());
  const absl::Status first = a.Add(chunks_[3]);  // skips chunk 1
  ASSERT_THAT(first, StatusIs(absl::StatusCode::kInvalidArgument));
  // The right chunks afterwards do not revive it.
  for (size_t i = 2; i < chunks_.size(); ++i) EXPECT_EQ(a.Add(chunks_[i]), first);
  auto out = a.Finish();
  ASSERT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(out.status(), first);
}

TEST_F(AssemblerErrorTest, StaysFailedAfterHeaderError) {
  MatrixAssembler a("other-job", kRound, 7, 3, 4);
  const absl::Status first = a.Add(chunks_[0]);
  ASSERT_THAT(first, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_FALSE(a.has_header());
  EXPECT_EQ(a.Add(chunks_[1]), first);
  EXPECT_EQ(a.Finish().status(), first);
}

TEST_F(AssemblerErrorTest, NothingAfterFinish) {
  auto a = Make();
  for (const auto& c : chunks_) ASSERT_TRUE(a.Add(c).ok());
  ASSERT_THAT(a.Finish(), IsOk());
  EXPECT_EQ(a.Finish().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(a.Add(chunks_[1]), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace fedmf::net
