#include "common/mf/embeddings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/mf/clipping.h"

namespace fedmf::mf {
namespace {

[[noreturn]] void Fatal(const char* what, long long a, long long b) {
  std::fprintf(stderr, "fedmf: fatal error in RatingMatrix: %s (%lld, %lld)\n", what, a, b);
  std::abort();
}

}  // namespace

RatingMatrix::RatingMatrix(int32_t num_users, int32_t num_items,
                           const std::vector<data::Rating>& ratings)
    : num_users_(num_users), num_items_(num_items) {
  if (num_users < 0 || num_items < 0) Fatal("negative shape", num_users, num_items);
  // Counting sort by user. It is stable, so each row keeps the input order of
  // its ratings: the layout (and everything seeded downstream, e.g. trimming)
  // is a pure function of the input vector.
  std::vector<int64_t> counts(static_cast<size_t>(num_users) + 1, 0);
  for (const data::Rating& r : ratings) {
    if (r.user < 0 || r.user >= num_users) Fatal("user out of range", r.user, num_users);
    if (r.item < 0 || r.item >= num_items) Fatal("item out of range", r.item, num_items);
    ++counts[static_cast<size_t>(r.user) + 1];
  }
  offsets_.assign(static_cast<size_t>(num_users) + 1, 0);
  for (int32_t i = 0; i < num_users; ++i) offsets_[i + 1] = offsets_[i] + counts[i + 1];
  entries_.resize(ratings.size());
  std::vector<int64_t> cursor(offsets_.begin(), offsets_.end() - 1);
  for (const data::Rating& r : ratings) entries_[cursor[r.user]++] = Entry{r.item, r.value};
}

int32_t RatingMatrix::MaxRowSize() const {
  int32_t best = 0;
  for (int32_t i = 0; i < num_users_; ++i) best = std::max(best, RowSize(i));
  return best;
}

std::vector<data::Rating> RatingMatrix::ToRatings() const {
  std::vector<data::Rating> out;
  out.reserve(entries_.size());
  for (int32_t i = 0; i < num_users_; ++i) {
    for (const Entry& e : Row(i)) out.push_back(data::Rating{i, e.item, e.value});
  }
  return out;
}

Matrix RandomEmbeddings(int32_t rows, int32_t dim, double scale, random::Csprng& rng) {
  Matrix m(rows, dim);
  double* data = m.data();
  const Eigen::Index n = m.size();
  for (Eigen::Index k = 0; k < n; ++k) data[k] = scale * rng.NextDouble();
  return m;
}

Matrix RandomEmbeddings(int32_t rows, int32_t dim, double scale, double rating_max,
                        random::Csprng& rng) {
  Matrix m = RandomEmbeddings(rows, dim, scale, rng);
  // With scale = InitScaleFor(mean, p) the expected squared row norm is
  // 4*mean/3, so for typical ratings clipping rarely bites; it is still
  // applied so that training starts inside the feasible set.
  if (rating_max > 0) ClipEmbeddings(m, rating_max);
  return m;
}

Matrix RoundedToFloat32(const Matrix& m) {
  Matrix out(m.rows(), m.cols());
  for (int64_t k = 0; k < m.size(); ++k) {
    const double x = m.data()[k];
    float f = static_cast<float>(x);  // nearest
    if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
    out.data()[k] = f;
  }
  return out;
}

double InitScaleFor(double mean_rating, int32_t dim) {
  // For independent u_k, v_k ~ U[0, s): E<u, v> = p * (s/2)^2 = mean
  // => s = 2 * sqrt(mean / p).
  if (dim <= 0 || mean_rating <= 0) return 0.0;
  return 2.0 * std::sqrt(mean_rating / static_cast<double>(dim));
}

}  // namespace fedmf::mf
