#include "common/fmf/stats_release.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/dp/noise.h"
#include "common/dp/snapping.h"

namespace fedmf::fmf::stats {
namespace {

double Clamp(double x, double bound) { return std::clamp(x, -bound, bound); }

// The packed upper triangle of x x^T (row by row: (0,0), (0,1), ...).
void PackOuter(const Vec& x, Vec& out) {
  const int k = static_cast<int>(x.size());
  out.resize(k * (k + 1) / 2);
  int i = 0;
  for (int a = 0; a < k; ++a) {
    for (int b = a; b < k; ++b) out[i++] = x[a] * x[b];
  }
}

// Column c's Gram (symmetric, k x k) and right-hand side from a release.
void Unpack(const Statistics& s, int32_t c, Mat& gram, Vec& rhs) {
  const int k = s.dim + 1;
  const double* block = s.values.data() + static_cast<size_t>(c) * StatsWidth(s.dim);
  gram.resize(k, k);
  rhs.resize(k);
  int i = 0;
  for (int a = 0; a < k; ++a) {
    for (int b = a; b < k; ++b) {
      gram(a, b) = block[i];
      gram(b, a) = block[i];
      ++i;
    }
  }
  for (int a = 0; a < k; ++a) rhs[a] = block[i + a];
}

// The nearest PSD matrix in Frobenius norm (negative eigenvalues set to 0).
Mat ProjectPsd(const Mat& g) {
  if (g.rows() == 1) return Mat::Constant(1, 1, std::max(0.0, g(0, 0)));
  Eigen::SelfAdjointEigenSolver<Mat> eig(g);
  const Vec values = eig.eigenvalues().cwiseMax(0.0);
  return eig.eigenvectors() * values.asDiagonal() * eig.eigenvectors().transpose();
}

}  // namespace

absl::StatusOr<Rows> MakeRows(const std::vector<data::Rating>& ratings, int32_t num_users,
                              int32_t num_items, bool by_user) {
  Rows rows;
  rows.num_rows = by_user ? num_users : num_items;
  rows.num_cols = by_user ? num_items : num_users;
  rows.offsets.assign(static_cast<size_t>(rows.num_rows) + 1, 0);
  for (size_t i = 0; i < ratings.size(); ++i) {
    const data::Rating& r = ratings[i];
    if (r.user < 0 || r.user >= num_users || r.item < 0 || r.item >= num_items) {
      return absl::InvalidArgumentError(absl::StrCat("rating ", i, " (user ", r.user, ", item ",
                                                     r.item, ") is outside ", num_users, " x ",
                                                     num_items));
    }
    ++rows.offsets[(by_user ? r.user : r.item) + 1];
  }
  for (int32_t r = 0; r < rows.num_rows; ++r) rows.offsets[r + 1] += rows.offsets[r];
  rows.cols.resize(ratings.size());
  rows.values.resize(ratings.size());
  std::vector<int64_t> next(rows.offsets.begin(), rows.offsets.end() - 1);
  for (const data::Rating& r : ratings) {
    const int64_t at = next[by_user ? r.user : r.item]++;
    rows.cols[at] = by_user ? r.item : r.user;
    rows.values[at] = r.value;
  }
  // Each row's entries by column; a second rating of the same pair would
  // put two terms in one column, which the sensitivities do not cover.
  std::vector<std::pair<int32_t, float>> row;
  for (int32_t r = 0; r < rows.num_rows; ++r) {
    row.clear();
    for (int64_t e = rows.offsets[r]; e < rows.offsets[r + 1]; ++e) {
      row.emplace_back(rows.cols[e], rows.values[e]);
    }
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0 && row[i].first == row[i - 1].first) {
        return absl::InvalidArgumentError(absl::StrCat(
            "two ratings of the same (user, item) pair: ", by_user ? "user " : "item ", r, ", ",
            by_user ? "item " : "user ", row[i].first, " (keep one rating per pair)"));
      }
      rows.cols[rows.offsets[r] + i] = row[i].first;
      rows.values[rows.offsets[r] + i] = row[i].second;
    }
  }
  return rows;
}

PublicModel EmptyPublicModel(int32_t num_cols, int32_t dim, double centre) {
  return {dim, centre, Mat::Zero(num_cols, dim + 1)};
}

PublicModel WithFactors(const PublicModel& model, int32_t dim, double scale, random::Csprng& rng) {
  PublicModel out{dim, model.centre, Mat::Zero(model.cols.rows(), dim + 1)};
  const int32_t keep = std::min(dim, model.dim);
  for (Eigen::Index c = 0; c < model.cols.rows(); ++c) {
    for (int32_t a = 0; a < dim; ++a) {
      out.cols(c, a) = a < keep ? model.cols(c, a) : dp::SampleGaussian(rng, scale);
    }
    out.cols(c, dim) = model.cols(c, model.dim);
  }
  return out;
}

absl::StatusOr<PublicModel> SanitizePublicModel(const PublicModel& model, double bias_bound,
                                                double factor_bound) {
  if (model.dim < 0 || model.cols.cols() != model.dim + 1 || !std::isfinite(model.centre)) {
    return absl::InvalidArgumentError("the public model's shape or centre is invalid");
  }
  PublicModel out = model;
  for (Eigen::Index c = 0; c < out.cols.rows(); ++c) {
    if (!out.cols.row(c).allFinite()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the public model's column ", c, " holds a non-finite number"));
    }
    // stableNorm: a factor of 1e300 must scale to the bound, not overflow to inf.
    const double norm = out.cols.row(c).head(out.dim).stableNorm();
    if (norm > factor_bound) out.cols.row(c).head(out.dim) *= factor_bound / norm;
    out.cols(c, out.dim) = Clamp(out.cols(c, out.dim), bias_bound);
  }
  return out;
}

Mat FitRows(const Rows& rows, const PublicModel& model, const FitOptions& options) {
  const int32_t d = model.dim;
  const int k = d + 1;
  Mat out = Mat::Zero(rows.num_rows, k);
  Mat a(k, k);
  Vec rhs(k), x(k);
  for (int32_t r = 0; r < rows.num_rows; ++r) {
    const int64_t n = rows.RowSize(r);
    if (n == 0) continue;
    a.setZero();
    rhs.setZero();
    for (int64_t e = rows.offsets[r]; e < rows.offsets[r + 1]; ++e) {
      const int32_t c = rows.cols[e];
      const double t = Clamp(rows.values[e] - model.centre - model.cols(c, d), options.bias_clip);
      x.head(d) = model.cols.row(c).head(d).transpose();
      x[d] = 1;
      a.selfadjointView<Eigen::Lower>().rankUpdate(x);
      rhs += t * x;
    }
    a = a.selfadjointView<Eigen::Lower>();
    for (int32_t i = 0; i < d; ++i) a(i, i) += options.factor_l2;
    a(d, d) += options.bias_l2;
    Vec y = a.ldlt().solve(rhs);
    if (d > 0 && options.factor_norm > 0) {
      const double norm = y.head(d).norm();
      if (norm > options.factor_norm) y.head(d) *= options.factor_norm / norm;
    }
    out.row(r) = y.transpose();
  }
  return out;
}

int32_t StatsWidth(int32_t dim) {
  const int32_t k = dim + 1;
  return k * (k + 1) / 2 + k;
}

Statistics ZeroStatistics(int32_t num_cols, int32_t dim) {
  return {dim, num_cols, std::vector<double>(static_cast<size_t>(num_cols) * StatsWidth(dim), 0.0)};
}

Statistics ComputeStatistics(const Rows& rows, const Mat& fit, double centre,
                             const StatsOptions& options, std::vector<double>* row_norms) {
  const int32_t d = options.dim;
  const int k = d + 1;
  const int32_t width = StatsWidth(d);
  const int32_t upper = k * (k + 1) / 2;
  Statistics out = ZeroStatistics(rows.num_cols, d);
  if (row_norms != nullptr) row_norms->assign(rows.num_rows, 0.0);
  const Eigen::Index bias_col = fit.cols() - 1;
  Vec x(k), packed;
  std::vector<double> residual;
  for (int32_t r = 0; r < rows.num_rows; ++r) {
    const int64_t n = rows.RowSize(r);
    if (n == 0) continue;
    x.head(d) = fit.row(r).head(d).transpose();
    x[d] = 1;
    PackOuter(x, packed);
    const double b = fit(r, bias_col);
    residual.clear();
    double residual_sq = 0;
    for (int64_t e = rows.offsets[r]; e < rows.offsets[r + 1]; ++e) {
      residual.push_back(Clamp(rows.values[e] - centre - b, options.residual_clip));
      residual_sq += residual.back() * residual.back();
    }
    double w = 1;
    if (options.weighting == Weighting::kPerRow) {
      const double a = 1 / std::sqrt(static_cast<double>(n));
      // ||contribution||^2 = a^2 (n ||packed||^2 + ||x||^2 sum_c e_rc^2).
      const double norm = a * std::sqrt(static_cast<double>(n) * packed.squaredNorm() +
                                        x.squaredNorm() * residual_sq);
      if (row_norms != nullptr) (*row_norms)[r] = norm;
      w = a * (norm > options.row_clip ? options.row_clip / norm : 1.0);
    } else if (row_norms != nullptr) {
      (*row_norms)[r] =
          std::sqrt(static_cast<double>(n) * packed.squaredNorm() + x.squaredNorm() * residual_sq);
    }
    for (int64_t e = rows.offsets[r]; e < rows.offsets[r + 1]; ++e) {
      double* block = out.values.data() + static_cast<size_t>(rows.cols[e]) * width;
      for (int32_t i = 0; i < upper; ++i) block[i] += w * packed[i];
      const double we = w * residual[e - rows.offsets[r]];
      for (int i = 0; i < k; ++i) block[upper + i] += we * x[i];
    }
  }
  return out;
}

Statistics ReleaseStatistics(const Rows& rows, const PublicModel& model, const FitOptions& fit,
                             const StatsOptions& options, std::vector<double>* row_norms) {
  return ComputeStatistics(rows, FitRows(rows, model, fit), model.centre, options, row_norms);
}

double RatingSensitivity(const StatsOptions& stats, const FitOptions& fit) {
  return std::sqrt(1 + stats.residual_clip * stats.residual_clip +
                   fit.bias_clip * fit.bias_clip / (1 + fit.bias_l2));
}

void AddInto(Statistics& out, const Statistics& a) {
  for (size_t i = 0; i < out.values.size(); ++i) out.values[i] += a.values[i];
}

void SubtractFrom(Statistics& out, const Statistics& a) {
  for (size_t i = 0; i < out.values.size(); ++i) out.values[i] -= a.values[i];
}

void AddNoise(Statistics& stats, double sigma, random::Csprng& rng) {
  if (sigma > 0) dp::AddGaussian(rng, sigma, stats.values.data(), stats.values.size());
}

double MagnitudeBound(const StatsOptions& options, int32_t num_rows) {
  const double per_row = options.weighting == Weighting::kPerRow
                             ? options.row_clip
                             : std::max(1.0, options.residual_clip);
  return per_row * std::max<int32_t>(num_rows, 1);
}

void AddSnappedNoise(Statistics& stats, double sigma, double bound, random::Csprng& rng) {
  if (!(sigma > 0)) return;
  AddNoise(stats, sigma, rng);
  const double clamp = bound + 64 * sigma;
  const double grid = dp::SnapGranularity(sigma, clamp);
  for (double& v : stats.values) v = dp::SnapTowardZero(std::clamp(v, -clamp, clamp), grid);
}

PublicModel SolvePublic(const Statistics& sum, const PublicModel& prior,
                        const SolveOptions& options) {
  const int32_t d = sum.dim;
  const int k = d + 1;
  PublicModel out;
  out.centre = prior.centre;
  out.dim = d > 0 ? d : prior.dim;
  out.cols = Mat::Zero(sum.num_cols, out.dim + 1);
  const double noise_ridge =
      options.noise_ridge * options.sigma * std::sqrt(static_cast<double>(k));
  const double bias_ridge = options.bias_l2 + noise_ridge;
  Mat gram;
  Vec rhs;
  for (int32_t c = 0; c < sum.num_cols; ++c) {
    Unpack(sum, c, gram, rhs);
    const double prior_bias = prior.cols(c, prior.dim);
    const double count = std::max(0.0, gram(d, d));
    if (d == 0 || count < options.min_count) {
      out.cols(c, out.dim) = (rhs[d] + bias_ridge * prior_bias) / (count + bias_ridge);
      if (d == 0) out.cols.row(c).head(out.dim) = prior.cols.row(c).head(out.dim);
      continue;
    }
    Mat a = ProjectPsd(gram);
    for (int i = 0; i < d; ++i) a(i, i) += options.factor_l2 + noise_ridge;
    a(d, d) += bias_ridge;
    rhs[d] += bias_ridge * prior_bias;
    out.cols.row(c) = a.ldlt().solve(rhs).transpose();
  }
  return out;
}

double PartyModel::Predict(int32_t row, int32_t col) const {
  const Eigen::Index d = rows.cols() - 1;
  return centre + rows(row, d) + cols(col, d) + rows.row(row).head(d).dot(cols.row(col).head(d));
}

PartyModel FitPartyModel(const Rows& own, const Statistics* others, const PublicModel& start,
                         const FusionOptions& options) {
  const int32_t d = options.dim;
  const int k = d + 1;
  PublicModel model = start;  // start.dim == d (the caller extends it)
  const bool use_others = others != nullptr && options.others_weight > 0;
  // The others' statistics, PSD-projected once, embedded in the party's k
  // coordinates: their factors on the first others->dim, their bias last.
  const int ko = use_others ? others->dim + 1 : 0;
  std::vector<Mat> other_gram;
  std::vector<Vec> other_rhs;
  double other_ridge = 0;
  if (use_others) {
    other_gram.resize(own.num_cols);
    other_rhs.resize(own.num_cols);
    Mat g;
    Vec h;
    for (int32_t c = 0; c < own.num_cols; ++c) {
      Unpack(*others, c, g, h);
      other_gram[c] = options.others_weight * ProjectPsd(g);
      other_rhs[c] = options.others_weight * h;
    }
    other_ridge = options.others_weight * options.noise_ridge * options.others_sigma *
                  std::sqrt(static_cast<double>(ko));
  }
  auto embed = [&](int i) { return i < ko - 1 ? i : d; };
  PartyModel out;
  out.centre = model.centre;
  std::vector<Mat> gram(own.num_cols, Mat(k, k));
  std::vector<Vec> rhs(own.num_cols, Vec(k));
  std::vector<double> counts(own.num_cols);
  Vec x(k);
  for (int32_t it = 0; it < options.iterations; ++it) {
    out.rows = FitRows(own, model, options.fit);
    for (int32_t c = 0; c < own.num_cols; ++c) {
      gram[c].setZero();
      rhs[c].setZero();
      counts[c] = 0;
    }
    for (int32_t r = 0; r < own.num_rows; ++r) {
      x.head(d) = out.rows.row(r).head(d).transpose();
      x[d] = 1;
      const double b = out.rows(r, d);
      for (int64_t e = own.offsets[r]; e < own.offsets[r + 1]; ++e) {
        const int32_t c = own.cols[e];
        gram[c].selfadjointView<Eigen::Lower>().rankUpdate(x);
        rhs[c] += (own.values[e] - model.centre - b) * x;
        counts[c] += 1;
      }
    }
    for (int32_t c = 0; c < own.num_cols; ++c) {
      Mat a = gram[c].selfadjointView<Eigen::Lower>();
      Vec h = rhs[c];
      double count = counts[c];
      if (use_others) {
        for (int i = 0; i < ko; ++i) {
          for (int j = 0; j < ko; ++j) a(embed(i), embed(j)) += other_gram[c](i, j);
          h[embed(i)] += other_rhs[c][i];
        }
        count += other_gram[c](ko - 1, ko - 1);
      }
      for (int i = 0; i < d; ++i) a(i, i) += options.col_factor_l2 + other_ridge;
      a(d, d) += options.col_bias_l2 + other_ridge;
      model.cols.row(c) = a.ldlt().solve(h).transpose();
    }
  }
  out.rows = FitRows(own, model, options.fit);
  out.cols = model.cols;
  return out;
}

}  // namespace fedmf::fmf::stats
