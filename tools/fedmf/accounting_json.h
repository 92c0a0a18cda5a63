// The privacy accounting of a cross-silo (FMF) job as JSON, for `fedmf train`,
// `fedmf demo` and `fedmf job status`: what each party's epsilon composes, so
// that anyone can recompute it from the JSON alone (issue #54).
#ifndef FEDMF_TOOLS_FEDMF_ACCOUNTING_JSON_H_
#define FEDMF_TOOLS_FEDMF_ACCOUNTING_JSON_H_

#include "common/fmf/job_config.h"
#include "common/fmf/noise_plan.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {

// Sets j's `sampling_unit`, `sample_rate`, `noise_multiplier`, `steps`,
// `count_noise_multiplier` and `accounting`: the accountant, its orders and
// conversion, the releases it composes (the Poisson-subsampled Gaussian steps
// at (q, z) over the sampling unit, and the size release, one Gaussian at
// z_c), and the `fedmf privacy epsilon` command that recomputes `epsilon`
// (and, VFL per user, `epsilon_per_user_global` with `--parties s`).
// Non-private jobs: `accounting` is null.
void AddFmfAccounting(const fmf::JobConfig& config, const fmf::NoisePlan& plan, int parties,
                      nlohmann::json& j);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_ACCOUNTING_JSON_H_
