// Sufficient statistics released once per alternation, noise added once for
// the federation (issue #53; DPALS-style, Chien et al., ICML 2021).
//
// A party holds some entities whole — its "rows": an HFL party's users, a VFL
// party's items — and rates against entities every party shares — the
// "columns": HFL's items, VFL's users — which a PUBLIC model describes: per
// column c a factor g_c (dim numbers) and a bias b_c, around a public centre
// mu0 (the middle of the rating range). Per alternation each party
//   1. fits every row r's own (f_r, b_r) by ridge regression on the row's own
//      ratings against the public model (FitRows: row r's fit reads only row
//      r's ratings and the public model);
//   2. computes, per column, the Gram sum_r a_rc x_r x_r^T (upper triangle) and
//      the right-hand side sum_r a_rc e_rc x_r of x_r = [f_r, 1] and the
//      residual e_rc = clamp(r_rc - mu0 - b_r, +-residual_clip)
//      (ComputeStatistics), a flat vector of num_cols * StatsWidth(dim);
//   3. adds its share of the Gaussian noise (the federation's sum carries it
//      once: stats_plan.h), and only the parties' sum is revealed (secure
//      aggregation among the parties);
// and the public model is solved from the sum (SolvePublic). Finally each
// party fits its own model from its own exact ratings plus the others'
// noisy statistics as a prior (FitPartyModel): the release never replaces
// what the party knows.
//
// Sensitivities (docs/privacy.md, section stats; tests/unit/fmf/
// stats_sensitivity_test.cc searches neighbouring datasets):
//  - per row (HFL per user): a_rc = 1/sqrt(n_r) and each row's whole
//    contribution vector scaled to L2 norm <= row_clip: Delta = row_clip.
//  - per rating, dim 0 (item biases in HFL, user biases in VFL): a_rc = 1;
//    Delta^2 = 1 + residual_clip^2 + bias_clip^2 / (1 + bias_l2)
//    (RatingSensitivity).
// Pure: no I/O, no clock; randomness only through the caller's Csprng.
#ifndef FEDMF_COMMON_FMF_STATS_RELEASE_H_
#define FEDMF_COMMON_FMF_STATS_RELEASE_H_

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/random/csprng.h"

namespace fedmf::fmf::stats {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;

// One party's ratings grouped by its rows (CSR), in its local row indices
// and the shared column indices.
struct Rows {
  int32_t num_rows = 0;
  int32_t num_cols = 0;
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> cols;
  std::vector<float> values;
  int64_t RowSize(int32_t r) const { return offsets[r + 1] - offsets[r]; }
  int64_t nnz() const { return static_cast<int64_t>(cols.size()); }
};
// `ratings` as rows: by_user (HFL) groups by rating.user (rows = users, cols =
// items), otherwise by rating.item (VFL: rows = items, cols = users).
// InvalidArgument naming the rating if an index is out of range.
absl::StatusOr<Rows> MakeRows(const std::vector<data::Rating>& ratings, int32_t num_users,
                              int32_t num_items, bool by_user);

// The public model of the columns: col(c) = [g_c (dim), b_c].
struct PublicModel {
  int32_t dim = 0;
  double centre = 0;  // mu0
  Mat cols;           // num_cols x (dim + 1)
};
// Zero factors and biases for num_cols columns.
PublicModel EmptyPublicModel(int32_t num_cols, int32_t dim, double centre);
// `model` with `dim` factor columns: its own where it has them, the rest
// drawn i.i.d. N(0, scale^2) from `rng` (public: a job-wide stream, nothing
// of any party's data); the biases kept.
PublicModel WithFactors(const PublicModel& model, int32_t dim, double scale, random::Csprng& rng);

// The public model as a party uses it, whatever the server sent: every factor
// scaled to norm <= factor_bound, every bias clamped to +-bias_bound.
// InvalidArgument naming the column for a non-finite number (a NaN would
// pass the clamps and the row clipping and make the release depend on which
// rows rated the column).
absl::StatusOr<PublicModel> SanitizePublicModel(const PublicModel& model, double bias_bound,
                                                double factor_bound);

struct FitOptions {
  double factor_l2 = 5;    // ridge on f_r (absolute, in units of one rating)
  double bias_l2 = 5;      // ridge on b_r (absolute: the per-rating proof needs it)
  double bias_clip = 2;    // the fit's targets r - mu0 - b_c are clamped to +-this
  double factor_norm = 1;  // ||f_r|| scaled down to at most this (release fits only)
};
// Row r's (f_r, b_r) minimising sum_c (t_rc - b_r - f_r.g_c)^2 + factor_l2
// ||f_r||^2 + bias_l2 b_r^2, t_rc = clamp(r_rc - mu0 - b_c, +-bias_clip), then
// f_r scaled to norm <= factor_norm (<= 0: not scaled). Row-major result:
// rows x (dim + 1) = [f_r, b_r]. A row without ratings gets zeros. With dim 0
// this is b_r = sum_c t_rc / (n_r + bias_l2).
Mat FitRows(const Rows& rows, const PublicModel& model, const FitOptions& options);

// Numbers per column in a release of dimension dim: the upper triangle of the
// (dim+1)^2 Gram, then the dim+1 right-hand side.
int32_t StatsWidth(int32_t dim);

enum class Weighting {
  kPerRow,     // a_rc = 1/sqrt(n_r), each row's contribution clipped to row_clip
  kPerRating,  // a_rc = 1, no row clipping (dim 0 only: RatingSensitivity)
};

struct StatsOptions {
  int32_t dim = 0;
  Weighting weighting = Weighting::kPerRow;
  double residual_clip = 2;  // |e_rc| <= this
  double row_clip = 1;       // kPerRow: Delta
};

struct Statistics {
  int32_t dim = 0;
  int32_t num_cols = 0;
  std::vector<double> values;  // num_cols * StatsWidth(dim), column-major blocks
};
Statistics ZeroStatistics(int32_t num_cols, int32_t dim);

// Step 2 above for the rows' fit `fit` (FitRows, dim >= options.dim: the
// first options.dim factors and the bias are used). `row_norms`, if given,
// receives each row's contribution norm before clipping (tests).
Statistics ComputeStatistics(const Rows& rows, const Mat& fit, double centre,
                             const StatsOptions& options, std::vector<double>* row_norms = nullptr);

// One party's pre-noise release: FitRows against `model`, then
// ComputeStatistics of the fit (what the sensitivity tests measure).
Statistics ReleaseStatistics(const Rows& rows, const PublicModel& model, const FitOptions& fit,
                             const StatsOptions& options, std::vector<double>* row_norms = nullptr);

// L2 sensitivity of a kPerRating release (dim 0) for one rating added or
// removed, the row's bias fitted as FitRows does:
//   Delta^2 = 1 (count) + residual_clip^2 (the rating's own residual)
//           + bias_clip^2 / (1 + bias_l2) (the row's bias moves every other
//             residual of the row; sum over n of n (2n+l)^2 / ((n+l)(n+1+l))^2
//             is at most 1/(1+l)).
double RatingSensitivity(const StatsOptions& stats, const FitOptions& fit);

// out += a (same shape); out -= a.
void AddInto(Statistics& out, const Statistics& a);
void SubtractFrom(Statistics& out, const Statistics& a);
// Adds i.i.d. N(0, sigma^2) to every number (sigma 0: nothing).
void AddNoise(Statistics& stats, double sigma, random::Csprng& rng);
// A public bound on |value| of any number of a party's pre-noise release
// over `num_rows` rows (its index size, public): every row contributes at
// most row_clip (per row) or max(1, residual_clip) (per rating, dim 0) to a
// number.
double MagnitudeBound(const StatsOptions& options, int32_t num_rows);
// The release as a party sends it: N(0, sigma^2) added to every number, then
// clamped to +-(bound + 64 sigma) and snapped toward zero to the grid
// dp::SnapGranularity(sigma, that clamp) (docs/privacy.md, floating point):
// data-independent post-processing of the Gaussian mechanism, so the set of
// values a party can send does not depend on its data. sigma 0: unchanged.
void AddSnappedNoise(Statistics& stats, double sigma, double bound, random::Csprng& rng);

struct SolveOptions {
  double factor_l2 = 0.5;  // ridge on g_c (absolute, in the release's weighted units)
  double bias_l2 = 1;      // ridge on b_c toward the prior's bias (absolute)
  double noise_ridge = 1;  // + this * sigma * sqrt(dim + 1) on every coordinate
  double sigma = 0;        // per-number noise of the sum being solved
  double min_count = 0;    // columns with a noisy weighted count below this get no factor
};
// The public model from the parties' summed (noisy) statistics: per column
// the Gram projected onto the PSD cone, the ridge added, solved; the bias is
// shrunk toward `prior`'s, factors toward 0. Columns whose weighted count
// (the Gram's last diagonal entry) is below min_count, and every column of a
// dim-0 release, keep only a bias (and `prior`'s factors are dropped there
// only when the release has factors).
PublicModel SolvePublic(const Statistics& sum, const PublicModel& prior,
                        const SolveOptions& options);

struct FusionOptions {
  int32_t dim = 0;           // the party's own model dimension (>= the others' release dim)
  double others_weight = 0;  // rho: the others' statistics count rho times (0: own data only)
  double others_sigma = 0;   // per-number noise left in the others' statistics
  double noise_ridge = 1;    // as SolveOptions::noise_ridge, on the others' part
  FitOptions fit;            // the party's row fits (factor_norm ignored: no release)
  double col_factor_l2 = 5;  // absolute, per-rating units
  double col_bias_l2 = 1;
  int32_t iterations = 5;
};
// The party's final model: `start` (the last public model, extended to
// options.dim) is alternately refit — its rows on their own ratings, its
// columns on the party's own ratings (weight 1 each) plus others_weight times
// the others' statistics (`others`, PSD-projected; may be null) — for
// `iterations` rounds. Rows x (dim + 1) and cols x (dim + 1) as PublicModel.
struct PartyModel {
  double centre = 0;
  Mat rows;  // [f_r, b_r]
  Mat cols;  // [g_c, b_c]
  double Predict(int32_t row, int32_t col) const;
};
PartyModel FitPartyModel(const Rows& own, const Statistics* others, const PublicModel& start,
                         const FusionOptions& options);

}  // namespace fedmf::fmf::stats

#endif  // FEDMF_COMMON_FMF_STATS_RELEASE_H_
