// Holds a running HFL job at a point its own traffic fixes, so a drill acts
// (kill, reset, SIGSTOP, restart) while the job certainly still runs,
// whatever the machine's speed. A status poll cannot promise that: on an idle
// machine 60 rounds take ~0.6 s and a 200 ms poll may see the job only after
// it ended.
//
// Every party dials the server through its own TcpProxy (so a drill also sees
// each party dial again). Each Stage-2 round moves the shared matrix down to
// every party, at least items x dim values of 4 bytes (float32; doubles move
// more), so party 0's proxy frozen once it relayed N such matrices holds the
// job within N rounds of the moment HoldAfterRounds() was called: no round
// closes without party 0 (the drills run with a long round deadline and
// liveness window). Release() lets the traffic through again.
#ifndef FEDMF_TESTS_INTEGRATION_ROUND_GATE_H_
#define FEDMF_TESTS_INTEGRATION_ROUND_GATE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/integration/tcp_proxy.h"
#include "tools/cluster/local_cluster.h"

namespace fedmf::it {

class RoundGate {
 public:
  // `shared_values`: entries of the shared matrix (items x dim in HFL).
  static absl::StatusOr<std::unique_ptr<RoundGate>> Create(int parties, int64_t shared_values);

  // Makes every party of `options` dial its own proxy.
  void Configure(cluster::ClusterOptions& options) const;
  // Once the server listens: the proxies forward to it.
  void Forward(int server_port);

  // Freezes party 0's link after at most `rounds` more rounds' worth of
  // traffic (fewer when the matrix travels in wider values).
  void HoldAfterRounds(int rounds);
  // Waits for the hold; false if it did not come within `timeout` (the job
  // ended or stalled first).
  bool WaitHeld(absl::Duration timeout);
  void Release();

  TcpProxy& proxy(int k) { return *proxies_[k]; }
  int parties() const { return static_cast<int>(proxies_.size()); }

 private:
  explicit RoundGate(int64_t round_bytes) : round_bytes_(round_bytes) {}
  int64_t round_bytes_;
  std::vector<std::unique_ptr<TcpProxy>> proxies_;
};

}  // namespace fedmf::it

#endif  // FEDMF_TESTS_INTEGRATION_ROUND_GATE_H_
