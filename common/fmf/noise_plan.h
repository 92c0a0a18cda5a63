// From a job's privacy target to the Gaussian noise each party adds.
#ifndef FEDMF_COMMON_FMF_NOISE_PLAN_H_
#define FEDMF_COMMON_FMF_NOISE_PLAN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/fmf/job_config.h"

namespace fedmf::fmf {

struct NoisePlan {
  bool private_training = false;
  double noise_multiplier = 0;   // z; 0 when non-private
  int64_t steps = 0;             // DP iterations charged (T*T' [+ kappa])
  double sample_rate = 0;        // eta
  double delta = 0;
  double epsilon = 0;            // epsilon actually reached by z (<= target)
  int32_t theta = 0;             // trimming bound (per-user only; 0 otherwise)
  // Per-entry noise std-dev sigma = z * Delta for each kind of step:
  double sigma_both = 0;  // a step updating U and V together (VFL Stage 2, DP local-only)
  double sigma_one = 0;   // a step updating one matrix (HFL Stage 2, VFL Stage 3)
};

// Calibrates z with the RDP accountant so that ChargedSteps() Poisson-
// subsampled Gaussian steps at rate eta give (epsilon, delta); sensitivities
// from embedding clipping, times theta for per-user granularity.
absl::StatusOr<NoisePlan> PlanNoise(const JobConfig& config);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_NOISE_PLAN_H_
