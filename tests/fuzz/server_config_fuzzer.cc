// fedmf-server's YAML config parser (strict reader + validation) on
// arbitrary bytes: operator input, but a crash on a typo is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/server_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fedmf::server::ParseServerConfig(std::string(reinterpret_cast<const char*>(data), size),
                                         "fuzz.yaml");
  return 0;
}
