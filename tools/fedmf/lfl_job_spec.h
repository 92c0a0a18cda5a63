// `fedmf job submit --spec FILE` for `setting: lfl`: the YAML form of an LFL
// job (keys in docs/configuration.md), validated as the server validates it.
#ifndef FEDMF_TOOLS_FEDMF_LFL_JOB_SPEC_H_
#define FEDMF_TOOLS_FEDMF_LFL_JOB_SPEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/config/yaml_reader.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::cli {

// `root` is the whole spec file (its `setting` is lfl); `path` names it in errors.
absl::StatusOr<v1::JobSpec> LflJobSpecFromYaml(config::YamlMap& root, const std::string& path);

// The `device_hosts` list of a device job (LFL, Hua S3): HOST:FIRST:COUNT
// entries; errors point at the key in `root`.
absl::StatusOr<std::vector<v1::DeviceGrant>> ParseDeviceGrants(
    const config::YamlMap& root, const std::vector<std::string>& hosts);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_LFL_JOB_SPEC_H_
