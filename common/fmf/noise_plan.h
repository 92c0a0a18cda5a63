// From a job's privacy target to the Gaussian noise each party adds.
#ifndef FEDMF_COMMON_FMF_NOISE_PLAN_H_
#define FEDMF_COMMON_FMF_NOISE_PLAN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/dp/ledger.h"
#include "common/fmf/job_config.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

struct NoisePlan {
  bool private_training = false;
  double noise_multiplier = 0;  // z; 0 when non-private
  int64_t steps = 0;            // DP iterations charged (T*T' [+ kappa])
  double sample_rate = 0;       // eta
  // What each step Poisson-samples at eta (JobConfig::DpSamplingUnit): the
  // unit of the neighbouring relation, which the amplification by
  // subsampling the accountant charges for needs (docs/privacy.md, sampling).
  SamplingUnit sampling_unit = SamplingUnit::kUser;
  double delta = 0;
  double epsilon = 0;  // epsilon actually reached by z (<= target)
  int32_t theta = 0;   // trimming bound (per-user only; 0 otherwise)
  // JobConfig::UserClipped(): each user's whole V-gradient is scaled to this
  // L2 norm, the Delta of an HFL step (theta is 0: nothing is trimmed).
  double clip_norm = 0;
  // Per-entry noise std-dev sigma = z * Delta for each kind of step:
  double sigma_both = 0;  // a step updating U and V together (VFL Stage 2, DP local-only)
  double sigma_one = 0;   // a step updating one matrix (HFL Stage 2, VFL Stage 3)
  // The size release (issue #14 finding 5): once per job, before Stage 2, the
  // party releases c~ = nnz + N(0, count_sigma^2), where nnz is the number of
  // ratings its DP steps train on (clamped, trimmed to theta per user). It is
  // the only data-dependent size that leaves the party or shapes a release:
  // the step normaliser is eta * c~, and an HFL party's aggregation weight
  // (the n_k it sends) is c~ / theta. One full-batch Gaussian step at
  // count_noise_multiplier, sensitivity count_sensitivity (theta per user, 1
  // per rating), composed with the Stage-2 steps in RDP: `epsilon` covers both.
  // With per-user clipping (clip_norm > 0) the count is of users (those with
  // at least one rating the DP steps use), sensitivity 1, and c~ is the weight.
  double count_noise_multiplier = 0;
  double count_sensitivity = 0;
  double count_sigma = 0;
};

// The count's share of the budget: at the order that is optimal for the
// gradient steps alone, the count costs this fraction of their RDP.
inline constexpr double kCountRdpShare = 0.05;

// The ledger key (round) of the size release: after every round the job can
// charge (0..T-1 Stage 2, T for VFL Stage 3), so it never collides.
int64_t CountReleaseRound(const JobConfig& config);

// The unit of every charge a job makes (its granularity; a coupling job is
// per rating): what its epsilon is about in the party's ledger.
dp::LedgerUnit ChargeUnit(const JobConfig& config);

// The size release of a party whose count is `count` (NoisePlan::count_*):
// c~ = max(1, count + N(0, count_sigma^2)), snapped in its binade
// (dp::SnapInBinadeTowardZero). Clamped only to the public constant 1 — not
// to the party's own size (issue #54: at count == that bound, every release
// with non-negative noise was the exact count). count_sigma > 0.
double DrawSizeRelease(double count, double count_sigma, random::Csprng& rng);

// Calibrates z with the RDP accountant so that ChargedSteps() Poisson-
// subsampled Gaussian steps at rate eta give (epsilon, delta); sensitivities
// from embedding clipping, times theta for per-user granularity, or the
// per-user clip norm C (JobConfig::UserClipped).
absl::StatusOr<NoisePlan> PlanNoise(const JobConfig& config);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_NOISE_PLAN_H_
