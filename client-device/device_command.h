// fedmf-device's whole command line and runners, as a function, so that a
// test build of the host (tests/integration/misbehaving_device_main.cc) can
// add its own flags and hooks without the production binary carrying them.
#ifndef FEDMF_CLIENT_DEVICE_DEVICE_COMMAND_H_
#define FEDMF_CLIENT_DEVICE_DEVICE_COMMAND_H_

#include <functional>

#include "CLI/CLI.hpp"
#include "client-device/lfl_host.h"

namespace fedmf::device {

// Called after fedmf-device's own flags are registered and before parsing;
// may add flags whose callbacks fill the LFL host's options (its test hooks).
using DeviceCommandExtension = std::function<void(CLI::App&, LflHostOptions&)>;

// Parses argv and runs the host until stopped; the process exit code.
int RunDeviceCommand(int argc, char** argv, const DeviceCommandExtension& extend);

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_DEVICE_COMMAND_H_
