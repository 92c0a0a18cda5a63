// fedmf.v1.JobSpec <-> fmf::JobConfig, validated at the edge.
#ifndef FEDMF_COMMON_FMF_WIRE_JOB_CODEC_H_
#define FEDMF_COMMON_FMF_WIRE_JOB_CODEC_H_

#include "absl/status/statusor.h"
#include "common/fmf/job_config.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::net {

// Fails (InvalidArgument naming the field) on unknown enums and on anything
// ValidateJobConfig rejects. Only federated settings travel on the wire.
// The seed does not travel in either direction: randomness is local.
absl::StatusOr<fmf::JobConfig> JobConfigFromSpec(const v1::JobSpec& spec);
v1::JobSpec SpecFromJobConfig(const fmf::JobConfig& config);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_FMF_WIRE_JOB_CODEC_H_
