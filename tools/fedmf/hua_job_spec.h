// `fedmf job submit --spec FILE` for `setting: hua-s3`: the YAML form of a
// Hua et al. S3 job over device hosts (keys below; example
// deploy/jobs/hua-s3.yaml), validated as the server validates it.
//
//   job_id, setting: hua-s3, epsilon (per released sum), rounds (iterations T),
//   dim, gamma, lambda, mu, max_online (K), join_prob, leave_prob,
//   initial_online, rating_min, rating_max, num_items, test_fraction, seed,
//   aggregator (the fedmf-aggregator address hosts and server dial),
//   device_hosts: [HOST:FIRST:COUNT, ...], expected_users,
//   join_deadline_seconds, round_deadline_seconds
#ifndef FEDMF_TOOLS_FEDMF_HUA_JOB_SPEC_H_
#define FEDMF_TOOLS_FEDMF_HUA_JOB_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/config/yaml_reader.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::cli {

// `root` is the whole spec file (its `setting` is hua-s3); `path` names it in errors.
absl::StatusOr<v1::JobSpec> HuaJobSpecFromYaml(config::YamlMap& root, const std::string& path);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_HUA_JOB_SPEC_H_
