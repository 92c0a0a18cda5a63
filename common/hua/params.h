// Parameters of Hua, Xia, Zhong (IJCAI 2015) "Differentially private matrix
// factorization": the three scenarios and the paper's hyper-parameters.
#ifndef FEDMF_COMMON_HUA_PARAMS_H_
#define FEDMF_COMMON_HUA_PARAMS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/ratings.h"

namespace fedmf::hua {

enum class Scenario {
  kTrusted,              // S1: the recommender sees the ratings, publishes an eps-DP V
  kUntrusted,            // S2: users report noisy item gradients straight to the recommender
  kUntrustedThirdParty,  // S2 + the semi-honest third party's masked sums
  kDynamic,              // S3: users join and leave; eta_j fixed once through the third party
};

// "hua-s1" | "hua-s2" | "hua-s2-tp" | "hua-s3".
absl::StatusOr<Scenario> ParseScenario(const std::string& name);
const char* ScenarioName(Scenario s);

// S1's objective-perturbation noise eta_j.
enum class ObjectiveNoise {
  kGammaNorm,  // Theorem 1: density ∝ exp(-eps ||eta|| / (2 Delta))
  kLaplace,    // Lemma 1: i.i.d. Laplace(0, 2 Delta sqrt(d) / eps) entries
};
absl::StatusOr<ObjectiveNoise> ParseObjectiveNoise(
    const std::string& name);  // gamma-norm | laplace
const char* ObjectiveNoiseName(ObjectiveNoise n);

// Fixed-point encoding into Z_P, P = 2^64 (see zp_codec.h for why these fit).
struct ZpParams {
  int frac_bits = 24;             // scale 2^24: resolution 6e-8 per summand
  double max_abs = 1048576.0;     // 2^20: bound on every encoded coordinate
  uint64_t max_summands = 16384;  // 2^14 contributions per item sum
};

struct HuaParams {
  Scenario scenario = Scenario::kUntrusted;
  int32_t dim = 50;           // d
  double gamma = 1.0 / 32.0;  // gain factor 2^-5
  double lambda = 0.001;      // user-profile ridge
  double mu = 0.001;          // item-profile ridge
  int32_t iterations = 100;
  // The non-private baseline ("the original MF scheme without any
  // protection running 100 iterations"), also S1's non-private U.
  int32_t baseline_iterations = 100;
  // The whole job's budget (what --epsilon sets), at `delta`. +inf: no noise
  // (the non-private run).
  //
  // Default (paper_noise false): the valid per-rating variant of
  // docs/privacy.md, section hua. Every user keeps theta rated items (chosen
  // without looking at values), projects u_i and every received v_j onto
  // ||x|| <= sqrt(R), scales her whole report vector of an iteration to
  // ||.|| <= clip, and the reports carry Gaussian noise (S2: each report,
  // S2-TP/S3: a distributed share per report so that each decoded sum
  // carries it) calibrated by the RDP accountant so that T iterations cost
  // at most `epsilon` (accounting.h). S1 uses a data-independent U and the
  // exact minimiser of the perturbed objective (central.h).
  double epsilon = 1.0;
  double delta = 1e-5;
  // The paper's mechanism as it is (no projections, no trimming, Theorem-2
  // Laplace pieces calibrated to epsilon / releases): no valid epsilon, so
  // the run is reported with epsilon = inf (PrivacyCaveat).
  bool paper_noise = false;
  // The valid variant only. theta (>= 1): rated items a user keeps. clip: C,
  // the bound on the L2 norm of one user's whole report vector per iteration
  // (0 = the derived bound, which never binds: accounting.h ReportNormBound).
  // Defaults chosen on ML-100K validation ratings
  // (docs/archive/results-2026.md, hua-valid).
  int32_t theta = 100;
  double clip = 3;
  // The valid variant: each user holds out this fraction of her ratings
  // (never used in a release) and, after the last iteration, predicts with
  // b_i + u_i^T v_j only if that beats her mean b_i on them (a choice that
  // stays on her side: she never ends up worse, on her own data, than
  // without the federation).
  double validation_fraction = 0.1;
  ObjectiveNoise s1_noise = ObjectiveNoise::kGammaNorm;
  // S3 dynamics (per iteration, between iterations).
  double join_prob = 0.005;
  double leave_prob = 0.01;
  // Fraction of users online before the first iteration; < 0 means the
  // stationary fraction join / (join + leave) of the join/leave chain.
  double initial_online = -1;
  int32_t max_online = 100;  // K: at most this many users per iteration
  double dropout_prob = 0;   // a selected user vanishes mid-iteration (S3)
  ZpParams zp;
};

absl::Status ValidateHuaParams(const HuaParams& p);

// The paper's mechanism (paper_noise): how many releases one rating enters
// over the job. S1 publishes V once; S2 / S2-TP / S3 release one noised sum
// (S2: one report) per rated item per iteration, so `iterations` of them
// (S3's initial eta sums carry noise only).
int64_t ReleasesPerRating(const HuaParams& p);
// The paper's mechanism: the eps each release is calibrated to, epsilon /
// ReleasesPerRating (+inf stays +inf).
double EpsilonPerRelease(const HuaParams& p);
// Why the paper's per-release analysis does not give a valid end-to-end
// guarantee for this scenario (never empty): a paper_noise run reports
// epsilon = inf and the paper's numbers under their own names.
std::string PrivacyCaveat(Scenario s);
// Whether the run adds noise whose epsilon holds: the valid variant at a
// finite epsilon. A paper_noise run adds noise but reports epsilon = inf.
bool IsPrivate(const HuaParams& p);

// Delta = max_r - min_r: the largest change of one rating.
double RatingSpan(const data::RatingRange& range);
// Per-coordinate Laplace scale of eta_j (Lemma 1, Theorem 2 pieces, rho~):
// b = 2 Delta sqrt(d) / eps. 0 when eps is +inf.
double LaplaceScale(double epsilon, const data::RatingRange& range, int32_t dim);
// Scale of the gamma-norm density exp(-||x|| / s): s = 2 Delta / eps. 0 when eps is +inf.
double GammaNormScale(double epsilon, const data::RatingRange& range);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_PARAMS_H_
