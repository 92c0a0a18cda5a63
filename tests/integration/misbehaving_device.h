// Misbehaviours of a device host for the integration tests, as LflHostOptions
// hooks (client-device/lfl_host.h): the production fedmf-device carries none
// of this; the test binary fedmf-device-misbehaving
// (misbehaving_device_main.cc) adds `--misbehave SPEC` and installs them.
//
// SPEC, all in iteration 0, round 1 of a job:
//   short-vector:D        device D's masked input is one value short
//   duplicate-share:D     device D sends its first encrypted share twice
//   foreign-device:D      the host also speaks for device D (not granted to it)
//   crash-at-unmasking:R  the host dies (SIGKILL) when the unmasking task of
//                         round R arrives: after its masked inputs were
//                         accepted, before any unmasking response
#ifndef FEDMF_TESTS_INTEGRATION_MISBEHAVING_DEVICE_H_
#define FEDMF_TESTS_INTEGRATION_MISBEHAVING_DEVICE_H_

#include <string>

#include "absl/status/status.h"
#include "client-device/lfl_host.h"

namespace fedmf::it {

// Installs the hooks SPEC describes into `options`; InvalidArgument naming
// the flag for an unknown SPEC.
absl::Status InstallMisbehaviour(const std::string& spec, device::LflHostOptions& options);

}  // namespace fedmf::it

#endif  // FEDMF_TESTS_INTEGRATION_MISBEHAVING_DEVICE_H_
