// Bytes the server's participant services received and sent (every
// protocol's), for the metrics exporter.
#ifndef FEDMF_SERVER_TRAFFIC_COUNTERS_H_
#define FEDMF_SERVER_TRAFFIC_COUNTERS_H_

#include <atomic>
#include <cstdint>

namespace fedmf::server {

struct TrafficCounters {
  std::atomic<int64_t> bytes_in{0};
  std::atomic<int64_t> bytes_out{0};
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_TRAFFIC_COUNTERS_H_
