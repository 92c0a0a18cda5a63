// The privacy of the valid Hua variant (docs/privacy.md, section hua): the
// bounds a user enforces on her own, the sensitivity they give, the Gaussian
// noise calibrated to it and the RDP accountant's epsilon over T iterations.
//
// Neighbours: Hua's value change (rated sets public) — D and D' differ in
// the value of ratings of ONE user (one rating, or all of them: the bound
// below does not depend on how many). Per iteration t a user i releases her
// whole report vector G_i(t) = (g_ij)_{j in I_i}, one block per kept item
// (|I_i| <= theta), g_ij = -2 (r_ij - b_i - u_i^T v_j) u_i, with u_i = u_i(t-1)
// and v_j the received row, both projected onto ||x|| <= sqrt(R) by the user,
// b_i in [r_min, r_max] her own mean (never sent). So
//   |r_ij - b_i - u^T v| <= (r_max - r_min) + R   (ErrorBound)
//   ||g_ij|| <= 2 ErrorBound sqrt(R),  ||G_i(t)|| <= sqrt(theta) times that
// (ReportNormBound), and the user scales G_i(t) to ||G_i(t)|| <= C
// (ReportClip). u_i(t-1) depends on every rating of the user, so G_i(t) and
// G'_i(t) may differ in every block: Delta = ||G - G'|| <= 2C
// (ReportSensitivity). Everything else a user's reports depend on (the v_j
// received, the other users' reports) is a function of earlier releases or
// of other users' data, so the T iterations compose adaptively.
//
// Mechanism: the released vector is G_i(t) + N(0, sigma^2 I) (S2: each
// report), or, with the third party (S2-TP, S3), each decoded item sum
// carries N(0, sigma^2) per coordinate — the sum of k' shares
// N(0, sigma^2 / k'), one per planned user, each user's blocks sitting in
// distinct item sums (so the recommender's view of user i is again G_i(t)
// plus N(0, sigma^2 I) plus terms independent of her data). sigma = z Delta,
// with z the smallest noise multiplier for which T Gaussian releases (sample
// rate 1) give epsilon <= the target at delta (dp::CalibrateNoiseMultiplier).
#ifndef FEDMF_COMMON_HUA_ACCOUNTING_H_
#define FEDMF_COMMON_HUA_ACCOUNTING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/hua/params.h"

namespace fedmf::hua {

// Each Gaussian draw is clamped at +-kNoiseTailSigmas standard deviations so
// that an encoded report has a bound (zp_codec.h); as in LFL
// (common/lfl/two_round_dp.h) this adds (1 + e^eps) P[clamp] to delta,
// P[|Z| > 10] = 1.5e-23 per draw.
inline constexpr double kNoiseTailSigmas = 10.0;

// R = max(|r_min|, |r_max|); u_i and v_j are projected onto ||x|| <= sqrt(R).
double RatingBound(const data::RatingRange& range);
double ProfileNormBound(const data::RatingRange& range);
// (r_max - r_min) + R: bounds |r - b_i - u^T v| under the projections.
double ErrorBound(const data::RatingRange& range);
// 2 ErrorBound sqrt(R) sqrt(theta): ||G_i(t)|| before any scaling.
double ReportNormBound(const HuaParams& p, const data::RatingRange& range);
// C: p.clip if set and smaller, else ReportNormBound.
double ReportClip(const HuaParams& p, const data::RatingRange& range);
// Delta = 2 C: the L2 change of a user's whole report vector per iteration.
double ReportSensitivity(const HuaParams& p, const data::RatingRange& range);

struct HuaPrivacy {
  bool valid = false;  // false: the paper's mechanism (epsilon = inf)
  double clip = 0;     // C
  double sensitivity = 0;
  double noise_multiplier = 0;  // z; 0 = no noise
  double sigma = 0;             // z Delta, per coordinate of every released sum/report
  int64_t releases = 0;         // T per user at most (S1: 1)
  double delta = 0;
  double epsilon = 0;  // of `releases` at z (<= the target); inf without noise
};

// The job's plan, computed identically by the recommender and by every user
// (from public parameters only). S1's valid variant is pure epsilon-DP
// (releases 1, delta 0, no Gaussian: central.h).
absl::StatusOr<HuaPrivacy> PlanPrivacy(const HuaParams& p, const data::RatingRange& range);

// The epsilon of a user who released `releases` times under `plan`
// (0 releases: 0; no noise: inf). Never above plan.epsilon for releases <= T.
absl::StatusOr<double> UserEpsilon(const HuaPrivacy& plan, int64_t releases);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_ACCOUNTING_H_
