// Embedding matrices and the sparse rating matrix the MF engine works on.
#ifndef FEDMF_COMMON_MF_EMBEDDINGS_H_
#define FEDMF_COMMON_MF_EMBEDDINGS_H_

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "common/data/ratings.h"
#include "common/random/csprng.h"

namespace fedmf::mf {

// Row-major so that one embedding (a row) is contiguous.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Ratings grouped by user (CSR). Immutable after construction.
class RatingMatrix {
 public:
  struct Entry {
    int32_t item;
    float value;
  };
  RatingMatrix() = default;
  // Ratings must have 0 <= user < num_users, 0 <= item < num_items (checked
  // with a CHECK-style abort: callers validate untrusted data before this).
  RatingMatrix(int32_t num_users, int32_t num_items, const std::vector<data::Rating>& ratings);

  int32_t num_users() const { return num_users_; }
  int32_t num_items() const { return num_items_; }
  int64_t nnz() const { return static_cast<int64_t>(entries_.size()); }
  std::span<const Entry> Row(int32_t user) const {
    return {entries_.data() + offsets_[user], entries_.data() + offsets_[user + 1]};
  }
  int32_t RowSize(int32_t user) const {
    return static_cast<int32_t>(offsets_[user + 1] - offsets_[user]);
  }
  int32_t MaxRowSize() const;
  std::vector<data::Rating> ToRatings() const;

 private:
  int32_t num_users_ = 0;
  int32_t num_items_ = 0;
  std::vector<int64_t> offsets_{0};
  std::vector<Entry> entries_;
};

// Random initialization: entries uniform in [0, scale), then clipped. With
// p dims, scale = sqrt(mean_rating / p) * 2 gives <u,v> near the mean rating.
// This overload has no R, so the entries are non-negative but rows are NOT
// norm-clipped; prefer the overload below (or call ClipEmbeddings yourself).
Matrix RandomEmbeddings(int32_t rows, int32_t dim, double scale, random::Csprng& rng);
// As above, then clipped with Pi for R = rating_max (<= 0: no clipping).
// Consumes exactly the same random stream as the overload above.
Matrix RandomEmbeddings(int32_t rows, int32_t dim, double scale, double rating_max,
                        random::Csprng& rng);
// The scale above for a rating mean `mean_rating`.
double InitScaleFor(double mean_rating, int32_t dim);

// Every value rounded to a float32, toward zero. Matrices the federation
// shares (a party's upload, the server's aggregate, LFL's V) are released at
// float32 precision: the protocol rounds them where they are made, so the
// wire's float32 encoding is lossless and an in-process run equals a daemon
// run. Toward zero, so no value grows: signs, x >= 0 and every row norm bound
// (the clipped set Pi projects onto) survive the rounding. Rounding a DP
// release is post-processing (docs/privacy.md, wire).
Matrix RoundedToFloat32(const Matrix& m);

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_EMBEDDINGS_H_
