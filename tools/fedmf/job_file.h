// The job files operators submit (`fedmf job submit --spec`) and partners
// rehearse (`fedmf train/demo --job`): YAML with the keys of
// docs/configuration.md, plus `roster`.
#ifndef FEDMF_TOOLS_FEDMF_JOB_FILE_H_
#define FEDMF_TOOLS_FEDMF_JOB_FILE_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fmf/job_config.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::cli {

// A job spec from YAML (keys as in docs/configuration.md, plus `roster`).
// A file without `job_id` gets "<setting>-<UTC time to the millisecond>"
// (e.g. hfl-20261129T063512.123Z), so two such files never collide.
absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path);

// The same file for `fedmf train --job` and `fedmf demo --job` (a partner
// rehearses exactly the job it will run): the job as LoadJobSpecFile resolves
// it, which keys the file sets (only those override the commands' defaults;
// flags on the command line override the file), its roster, and the
// catalogue file `item_catalogue` names when it is a path. Cross-silo
// settings only (hfl, vfl, hfl-synsgd, coupling).
struct JobFile {
  fmf::JobConfig config;
  std::set<std::string> keys;
  std::vector<std::string> roster;
  std::string catalogue_file;
  int32_t min_parties = 0;
};
absl::StatusOr<JobFile> ReadJobFile(const std::string& path);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_JOB_FILE_H_
