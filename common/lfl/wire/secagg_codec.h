// Wire <-> library conversion for the device protocol (device.proto): the
// secure-aggregation messages of common/secagg and the session parameters.
// Only shapes are checked here (packed vector lengths, values < 2^bits); the
// secagg state machines validate everything else, since the bytes are still
// untrusted when they reach them.
#ifndef FEDMF_COMMON_LFL_WIRE_SECAGG_CODEC_H_
#define FEDMF_COMMON_LFL_WIRE_SECAGG_CODEC_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/secagg/config.h"
#include "common/secagg/messages.h"
#include "fedmf/v1/device.pb.h"

namespace fedmf::net {

// Bytes per packed value: ceil(bits / 8).
int PackedWidth(int bits);
// Little-endian, PackedWidth(bits) bytes per value.
std::string PackValues(std::span<const uint64_t> values, int bits);
// kInvalidArgument (naming `field`) unless exactly `count` values, each < 2^bits.
absl::StatusOr<std::vector<uint64_t>> UnpackValues(const std::string& bytes, size_t count, int bits,
                                                   const char* field);

v1::SecAggSession SessionToProto(const secagg::SessionConfig& config);
// Validated with secagg::ValidateSessionConfig.
absl::StatusOr<secagg::SessionConfig> SessionFromProto(const v1::SecAggSession& proto);

v1::DevicePhase DevicePhaseOf(secagg::Phase phase);

// Device side.
v1::DeviceMessage ClientMessageToProto(const secagg::ClientMessage& message, int bits);
absl::StatusOr<secagg::ServerMessage> ServerMessageFromProto(const v1::InboxMessage& message,
                                                             uint64_t aggregation_id);

// Server side. `message.device()` must already be authorized by the caller.
absl::StatusOr<secagg::ClientMessage> ClientMessageFromProto(const v1::DeviceMessage& message,
                                                             const secagg::SessionConfig& config);
v1::InboxMessage ServerMessageToProto(const secagg::ServerMessage& message);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_LFL_WIRE_SECAGG_CODEC_H_
