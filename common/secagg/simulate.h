// Runs one whole aggregation in process — server and n devices, the same
// state machines the daemons drive — for tests and benchmarks.
//
// Devices can vanish at any phase boundary (DropoutPlan). Everything is a
// deterministic function of `seed`: the aggregation id, the graph seed, every
// device's keys and input, the server's randomness. `num_threads` > 1 runs
// the devices' work of a phase on that many threads (each device is touched
// by one thread; messages reach the server in roster order), so results do
// not depend on it. The state machines themselves stay single-threaded.
#ifndef FEDMF_COMMON_SECAGG_SIMULATE_H_
#define FEDMF_COMMON_SECAGG_SIMULATE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/secagg/client_state_machine.h"
#include "common/secagg/config.h"
#include "common/secagg/parameters.h"
#include "common/secagg/server_state_machine.h"
#include "common/secagg/session.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg {

// The long-lived state of a simulated session (session.h): the server's and
// every device's. Simulate fills it in the session's first aggregation (the
// setup); later aggregations reuse its keys, graph seed and thresholds, with
// aggregation ids counting up from the setup's.
struct SimulatedSession {
  std::shared_ptr<ServerSession> server = std::make_shared<ServerSession>();
  std::vector<std::shared_ptr<ClientSession>> devices;  // by roster index; empty before setup
  std::optional<SessionConfig> setup;                   // the setup's config
  uint64_t last_aggregation_id = 0;
};

// Devices (by roster id) that stop talking at a given point.
struct DropoutPlan {
  std::vector<DeviceId> before_advertise;    // never show up
  std::vector<DeviceId> after_advertise;     // advertise keys, then vanish
  std::vector<DeviceId> after_share_keys;    // share keys, never send a masked input
  std::vector<DeviceId> after_masked_input;  // send y_i, gone before the unmasking request
  std::vector<DeviceId> during_unmasking;    // compute the response, which is lost
};

struct SimulationSpec {
  size_t num_devices = 10;
  size_t vector_length = 16;
  int bits = 32;
  // How k, t, m are chosen unless `parameters` is set.
  GraphKind graph = GraphKind::kHarary;
  SecurityRequirements requirements;
  std::optional<GraphParameters> parameters;
  DropoutPlan dropouts;
  uint64_t seed = 0;
  int num_threads = 1;
  // Keep every y_i the server accepted (the server's view), for tests.
  bool record_masked_inputs = false;
  // Sum the accepted inputs in the clear into SimulationResult::expected_sum,
  // the check tests and benchmarks compare the protocol's output with. Off
  // for a job that only needs the sum (common/lfl): it is a single-threaded
  // pass over every input, 3% of an LFL iteration's CPU.
  bool compute_expected_sum = true;
  // Against an active server (signing.h): signed advertisements (keys
  // certified by a simulated authority, one host per device) and the
  // consistency-check round.
  bool signing = false;
  // With signing: the long-term identities (the authority and every device's
  // signing key, i.e. one job) derive from this seed rather than `seed`, so
  // consecutive aggregations of a job reuse them; and, if set, neighbours'
  // credentials are checked through this cache (one check per job).
  std::optional<uint64_t> signing_seed;
  std::shared_ptr<CredentialCache> credential_cache;
  // Run inside this session (its setup if it is empty). A device that did
  // not complete the setup stays away from the session's later aggregations.
  std::shared_ptr<SimulatedSession> session;
  // x_i for the device at roster index i; default: uniform in Z_{2^bits}
  // from the seed. Must be deterministic and thread-safe.
  std::function<std::vector<uint64_t>(size_t index, DeviceId id)> input;
};

enum SimPhase : size_t { kKeyAgreement = 0, kSharing = 1, kMasking = 2, kUnmasking = 3 };

struct SimulationResult {
  SessionConfig config;
  ServerState server_state = ServerState::kR0AdvertiseKeys;
  absl::Status abort_reason;
  std::vector<uint64_t> sum;       // the server's output (empty if aborted)
  std::vector<DeviceId> included;  // U3 per the server
  // Σ x_i over the devices whose y_i was accepted; empty unless
  // SimulationSpec::compute_expected_sum.
  std::vector<uint64_t> expected_sum;
  std::vector<Rejection> rejections;
  std::array<std::vector<DeviceId>, 4> survivors;  // U1..U4 per the server
  std::map<DeviceId, ClientState> client_states;
  std::map<DeviceId, std::vector<uint64_t>> masked_inputs;  // if recorded
  // Wall-clock seconds per phase: devices' work, and the server's (Receive
  // of that phase's messages + ClosePhase). In the masking phase the server
  // receives while devices still mask: its part is the time inside Receive,
  // the devices' the rest of the phase (which includes computing inputs).
  std::array<double, 4> client_seconds{};
  std::array<double, 4> server_seconds{};
  // The consistency-check round (spec.signing only); signing and verifying
  // the advertisements is inside key_agreement and sharing.
  double consistency_client_seconds = 0;
  double consistency_server_seconds = 0;
  // Payload bytes (keys, ciphertexts, vectors, shares, ids), all devices.
  uint64_t upload_bytes = 0;
  uint64_t download_bytes = 0;
};

// The roster Simulate uses: n ids, spread out so an id is never its index.
std::vector<DeviceId> SimulationRoster(size_t n);
// The default input of a device: uniform in Z_{2^bits}, from (seed, id).
std::vector<uint64_t> SimulationInput(uint64_t seed, DeviceId id, size_t length, int bits);

// Errors only for invalid specs or local failures; a protocol abort is a
// successful simulation with server_state == kAborted.
absl::StatusOr<SimulationResult> Simulate(const SimulationSpec& spec);

// The brief's shorthand: SecAgg+ with parameters from `requirements` defaults.
absl::StatusOr<SimulationResult> Simulate(size_t n, size_t vector_length, int bits,
                                          const DropoutPlan& dropouts, uint64_t seed);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_SIMULATE_H_
