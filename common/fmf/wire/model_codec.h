// fedmf.v1.ExportModelResponse <-> fmf::SavedPartyModel: a party's own model
// over its admin endpoint (fedmf export-model). Decoding checks every shape:
// the bytes come from the network.
#ifndef FEDMF_COMMON_FMF_WIRE_MODEL_CODEC_H_
#define FEDMF_COMMON_FMF_WIRE_MODEL_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/fmf/saved_model.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::net {

v1::ExportModelResponse ModelToProto(const fmf::SavedPartyModel& model, const std::string& job_id,
                                     const std::string& setting);
// The model, named `name` (a file-name-safe party name).
absl::StatusOr<fmf::SavedPartyModel> ModelFromProto(const v1::ExportModelResponse& proto,
                                                    const std::string& name);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_FMF_WIRE_MODEL_CODEC_H_
