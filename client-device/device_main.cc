// fedmf-device: one process hosting many virtual devices (one user each),
// dialing out to fedmf-server over mTLS. The role the devices play is chosen
// with --setting; each setting is one runner below (LFL-SGDMF: lfl_host.h,
// Hua et al. S3 users: hua_host.h). `--setting lfl,hua-s3` runs both roles
// side by side (one thread each) for the same users, so one device host
// serves whichever job grants it devices.
#include "client-device/device_command.h"
#include "common/base/allocator.h"
#include "common/base/mutex_checks.h"

int main(int argc, char** argv) {
  fedmf::base::ConfigureAllocator("fedmf-device");  // before any thread exists
  fedmf::base::ConfigureMutexChecks();
  return fedmf::device::RunDeviceCommand(argc, argv, nullptr);
}
