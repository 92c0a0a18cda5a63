// `fedmf train --setting hua-s1|hua-s2|hua-s2-tp|hua-s3`: Hua et al.'s
// scenarios with the recommender, users and third party in one process.
#ifndef FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_
#define FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/hua/accounting.h"
#include "common/hua/params.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

int RunHuaTrain(const JobFlags& flags);
// The scenario's parameters from the --hua-* flags (also `fedmf demo --setting hua-s3`).
absl::StatusOr<hua::HuaParams> BuildHuaParams(const JobFlags& flags);

// The privacy fields of a Hua run's JSON: `epsilon` (the valid variant: the
// epsilon of the user who released most, at `delta`; +inf ("inf") without
// noise and for the paper's mechanism, with `privacy_caveat`), `mechanism`,
// `epsilon_budget` (--epsilon) and the plan (theta, clip, sensitivity,
// noise_multiplier, sigma), or the paper's per-release fields.
void AddHuaPrivacyJson(const hua::HuaParams& p, const hua::HuaPrivacy& plan, double epsilon,
                       nlohmann::json& j);
// The same as one human-readable line.
std::string HuaPrivacyLine(const hua::HuaParams& p, const hua::HuaPrivacy& plan, double epsilon);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_
