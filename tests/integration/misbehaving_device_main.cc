// fedmf-device-misbehaving: fedmf-device plus `--misbehave SPEC`
// (misbehaving_device.h), for the integration tests only. LocalCluster starts
// it instead of fedmf-device for a host given LflHostArgs::misbehave.
#include <string>

#include "CLI/CLI.hpp"
#include "client-device/device_command.h"
#include "tests/integration/misbehaving_device.h"

int main(int argc, char** argv) {
  return fedmf::device::RunDeviceCommand(
      argc, argv, [](CLI::App& app, fedmf::device::LflHostOptions& options) {
        app.add_option_function<std::string>(
            "--misbehave",
            [&options](const std::string& spec) {
              if (absl::Status s = fedmf::it::InstallMisbehaviour(spec, options); !s.ok()) {
                throw CLI::ValidationError("--misbehave", std::string(s.message()));
              }
            },
            "short-vector:D | duplicate-share:D | foreign-device:D | crash-at-unmasking:R");
      });
}
