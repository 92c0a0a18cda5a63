// The Prometheus text parser on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/metrics/metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<fedmf::metrics::Sample> samples;
  (void)fedmf::metrics::ParseExposition(std::string(reinterpret_cast<const char*>(data), size),
                                        &samples);
  return 0;
}
