// The party's YAML config parser (strict reader + validation) on arbitrary
// bytes: a config file is operator input, but a crash on a typo is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "party/party_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fedmf::party::ParsePartyConfig(std::string(reinterpret_cast<const char*>(data), size),
                                       "fuzz.yaml");
  return 0;
}
