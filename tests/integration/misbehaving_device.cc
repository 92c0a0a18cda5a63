#include "tests/integration/misbehaving_device.h"

#include <csignal>
#include <cstdint>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log/log.h"

namespace fedmf::it {

absl::Status InstallMisbehaviour(const std::string& spec, device::LflHostOptions& options) {
  std::vector<std::string> parts = absl::StrSplit(spec, ':');
  uint64_t device = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &device) ||
      (parts[0] != "short-vector" && parts[0] != "duplicate-share" &&
       parts[0] != "foreign-device" && parts[0] != "crash-at-unmasking")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--misbehave '", spec,
                     "': expected short-vector:D, duplicate-share:D, foreign-device:D or "
                     "crash-at-unmasking:R"));
  }
  const std::string kind = parts[0];
  if (kind == "crash-at-unmasking") {
    const auto round = static_cast<int32_t>(device);
    options.before_phase = [round](const v1::DeviceTask& task) {
      if (task.iteration() != 0 || task.round() != round ||
          task.phase() != v1::DEVICE_PHASE_UNMASKING) {
        return;
      }
      spdlog::warn("misbehaving: killed during unmasking (iteration 0 round {})", round);
      spdlog::default_logger()->flush();
      ::raise(SIGKILL);
    };
    return absl::OkStatus();
  }
  options.before_submit = [kind, device](const v1::BatchHeader& h,
                                         std::vector<v1::DeviceMessage>& msgs) {
    if (h.iteration() != 0 || h.round() != 1) return;
    if (kind == "foreign-device") {
      if (h.phase() != v1::DEVICE_PHASE_ADVERTISE_KEYS || msgs.empty()) return;
      v1::DeviceMessage copy = msgs.front();
      copy.set_device(device);
      msgs.push_back(copy);
      spdlog::warn("misbehaving: speaking for device {}", device);
      return;
    }
    for (v1::DeviceMessage& x : msgs) {
      if (x.device() != device) continue;
      if (kind == "short-vector" && x.has_masked_input()) {
        std::string* b = x.mutable_masked_input()->mutable_masked();
        b->resize(b->size() - 8);
        spdlog::warn("misbehaving: device {} sends a short masked input", device);
      } else if (kind == "duplicate-share" && x.has_share_keys() &&
                 x.share_keys().shares_size() > 0) {
        *x.mutable_share_keys()->add_shares() = x.share_keys().shares(0);
        spdlog::warn("misbehaving: device {} sends a share twice", device);
      }
    }
  };
  return absl::OkStatus();
}

}  // namespace fedmf::it
