// The LFL-SGDMF role of a device host: the host's virtual devices of one job,
// each with its own LflDevice (u_i, xi_i — never leave it), its own secure-
// aggregation client per round with fresh keys, and its dropout draw. No
// gRPC: lfl_host.h feeds it decoded tasks and sends what it returns.
//
// Per iteration and round, a device's input is computed only when its
// masked input is due (so at most one phase chunk of vectors is in memory),
// after the host's ledger has been charged for it (round 1). Dropout
// (--dropout P1,P2): with probability P_r a device vanishes during round r at
// a phase boundary drawn uniformly (lfl::SampleDropPoint, as the simulator).
#ifndef FEDMF_CLIENT_DEVICE_LFL_ROLE_H_
#define FEDMF_CLIENT_DEVICE_LFL_ROLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client-device/device_ledger.h"
#include "client-device/secagg_guard.h"
#include "client-device/secagg_keys.h"
#include "common/data/partition.h"
#include "common/lfl/lfl_device.h"
#include "common/lfl/secagg_sum.h"
#include "common/lfl/secure_sum.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "common/mf/metrics.h"
#include "common/random/csprng.h"
#include "common/secagg/client_state_machine.h"
#include "fedmf/v1/device.pb.h"

namespace fedmf::device {

struct LflRoleOptions {
  double dropout_round1 = 0;
  double dropout_round2 = 0;
  // Tests only (the host's --seed): seeds the secagg keys, the dropout draws
  // and the devices' training noise (as lfl::SimulateLfl with this seed).
  // Without it every stream is OS-seeded; the job's seed is never used.
  std::optional<uint64_t> seed;
  int threads = 2;
  // Secure aggregation against an active server (secagg_keys.h): the host's
  // key authority (null: it has no device certificate, e.g. --insecure, and
  // cannot take part in an active aggregation) and its policy
  // require_active_secagg (refuse semi-honest sessions; secagg_guard.h).
  const HostKeyAuthority* key_authority = nullptr;
  bool require_active_secagg = true;
};

class LflRole {
 public:
  // `devices`: (device id, its data) for the devices of this host the job
  // selected; `n` = the job's device count (for zeta1).
  static absl::StatusOr<std::unique_ptr<LflRole>> Create(
      const LflRoleOptions& options, const net::LflJobConfig& job, int64_t n,
      std::vector<std::pair<uint64_t, data::PartyData>> devices, DeviceLedger* ledger);

  // Stage 1 against V(0); the host's devices' test error afterwards.
  absl::StatusOr<mf::ErrorMetrics> Pretrain(const mf::Matrix& v0);

  // Opens round `round` of `iteration` for the listed devices (those the
  // server asks): draws their dropout points, creates their secagg clients
  // and returns their AdvertiseKeys. `v` is V(iteration) (round 1).
  absl::StatusOr<std::vector<v1::DeviceMessage>> OpenRound(int32_t iteration, int round,
                                                           const v1::SecAggSession& session,
                                                           int64_t round1_survivors,
                                                           const std::vector<uint64_t>& devices,
                                                           const mf::Matrix* v);
  // Answers one chunk of server messages of the current phase.
  absl::StatusOr<std::vector<v1::DeviceMessage>> Answer(const std::vector<v1::InboxMessage>& inbox);

  // Stage 3 against the final V.
  absl::StatusOr<mf::ErrorMetrics> Finish(const mf::Matrix& v);
  // The largest ε any device of this host spent in the job (its ledger).
  absl::StatusOr<double> EpsilonSpent() const;

  size_t size() const { return devices_.size(); }
  // z of the job's Gaussian releases, as this host calibrated it (0 = no noise).
  double noise_multiplier() const { return noise_multiplier_; }

 private:
  struct Device {
    uint64_t id = 0;
    std::unique_ptr<lfl::LflDevice> lfl;
    std::optional<secagg::ClientStateMachine> client;
    lfl::DropPoint drop = lfl::DropPoint::kNone;
    std::optional<DeviceSigningIdentity> signing;  // active jobs: its key for the job
    // The key session (common/secagg/session.h) this device is in, if the
    // job runs one; replaced when the server starts a new one.
    std::shared_ptr<secagg::ClientSession> key_session;
    uint64_t key_session_id = 0;
  };
  LflRole(LflRoleOptions options, net::LflJobConfig job, int64_t n, DeviceLedger* ledger)
      : options_(std::move(options)), job_(std::move(job)), n_(n), ledger_(ledger) {}
  Device* Find(uint64_t id);
  // Round 1: V(t) gradient + xi_i; round 2: the replacement noise. Encoded.
  absl::StatusOr<std::vector<uint64_t>> Input(Device& d);

  LflRoleOptions options_;
  net::LflJobConfig job_;
  int64_t n_;
  DeviceLedger* ledger_;
  double noise_multiplier_ = 0;
  std::optional<lfl::LflCodecs> codecs_;
  std::map<uint64_t, Device> devices_;
  random::Csprng dropout_rng_ = random::Csprng::FromOsEntropy();
  // The round in progress.
  int32_t iteration_ = -1;
  int round_ = 0;
  uint64_t aggregation_id_ = 0;
  int64_t round1_survivors_ = 0;
  mf::Matrix v_;  // V(iteration) while round 1 needs it
  // What this host expects of the server's sessions (secagg_guard.h).
  SecAggExpectations expect_;
  int64_t own_min_survivors_ = 0;  // of the round in progress
  secagg::CredentialCache credential_cache_;
  secagg::KeyCertifier certifier_;  // active jobs only
};

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_LFL_ROLE_H_
