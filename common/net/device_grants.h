// The device grants of a device job (LFL, Hua S3): which host certificate may
// speak for which range of device (user) ids. One validation for both
// settings, so a spec that grants a device twice fails before any host joins.
#ifndef FEDMF_COMMON_NET_DEVICE_GRANTS_H_
#define FEDMF_COMMON_NET_DEVICE_GRANTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "fedmf/v1/federation.pb.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace fedmf::net {

// Every grant needs a host and 1 <= count, with first_device + count <=
// `limit`; no device id is in two grants. Errors name `field` (e.g.
// "lfl.grants"). Returns the number of granted devices.
absl::StatusOr<uint64_t> ValidateDeviceGrants(
    const google::protobuf::RepeatedPtrField<v1::DeviceGrant>& grants, const std::string& field,
    uint64_t limit);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_DEVICE_GRANTS_H_
