// `fedmf train --setting hua-s1|hua-s2|hua-s2-tp|hua-s3`: Hua et al.'s
// scenarios with the recommender, users and third party in one process.
#ifndef FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_
#define FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/hua/params.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

bool IsHuaSetting(const std::string& setting);
int RunHuaTrain(const JobFlags& flags);
// The scenario's parameters from the --hua-* flags (also `fedmf demo --setting hua-s3`).
absl::StatusOr<hua::HuaParams> BuildHuaParams(const JobFlags& flags);

// The privacy fields of a Hua run's JSON: `epsilon_budget` (--epsilon, the
// whole job), `epsilon_per_release` (what each release's noise is calibrated
// to), `releases_per_rating`, `epsilon_paper_analysis` (the per-release
// analysis composed: never above the budget), and `epsilon`: +inf ("inf")
// for every Hua scenario, because that analysis does not hold
// (`privacy_caveat` says why; docs/privacy.md, section hua).
void AddHuaPrivacyJson(const hua::HuaParams& p, nlohmann::json& j);
// The same as one human-readable line.
std::string HuaPrivacyLine(const hua::HuaParams& p);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_
