// `fedmf train --setting hua-s1|hua-s2|hua-s2-tp|hua-s3`: Hua et al.'s
// scenarios with the recommender, users and third party in one process.
#ifndef FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_
#define FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/hua/params.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

bool IsHuaSetting(const std::string& setting);
int RunHuaTrain(const JobFlags& flags);
// The scenario's parameters from the --hua-* flags (also `fedmf demo --setting hua-s3`).
absl::StatusOr<hua::HuaParams> BuildHuaParams(const JobFlags& flags);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_HUA_TRAIN_H_
