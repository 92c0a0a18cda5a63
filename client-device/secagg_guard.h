// What a device checks in the server's secure-aggregation announcements
// against its own expectations before it takes part or releases anything
// (the server is the adversary). Pure functions; LflRole applies them.
//
//   * n: the job's device count was already checked by the host (the job's
//     grants and the policy's min_devices); round 1's roster must be exactly
//     those n devices.
//   * the survivor minimum: LFL's skip rule needs |U1| >= ceil((1 - omega) n)
//     (common/lfl/two_round_dp.h, MinSurvivors) — below it the noise left in
//     the decoded sum is under the calibrated sigma_v^2 and the server view
//     analysis no longer holds. A session whose min_survivors is lower, a
//     round 2 whose announced |U1| is lower, or a consistency check listing
//     fewer survivors makes the device refuse, before any unmasking share.
//   * the active-server defence: with require_active a session without the
//     consistency check is refused (no silent downgrade by the server).
//   * key sessions (common/secagg/session.h) only if the job's spec, which
//     the host admitted, asked for them.
#ifndef FEDMF_CLIENT_DEVICE_SECAGG_GUARD_H_
#define FEDMF_CLIENT_DEVICE_SECAGG_GUARD_H_

#include <cstdint>
#include <string>

#include "common/secagg/config.h"

namespace fedmf::device {

struct SecAggExpectations {
  int64_t num_devices = 0;  // n of the job (host-checked)
  double omega = 0;         // the job's omega (host-checked against max_omega)
  bool require_active = true;
  bool allow_key_session = false;  // the job's spec asked for one (LflSpec.secagg_session)
};

// The least number of survivors this device accepts in a round whose roster
// has `roster_size` devices: ceil((1 - omega) * roster_size).
int64_t OwnMinSurvivors(const SecAggExpectations& e, size_t roster_size);

// Empty if the device may take part in round `round` (1 or 2) with `session`
// (round 2: `round1_survivors` = the |U1| the server announces); otherwise the
// reason it refuses. `key_session`: the aggregation runs in a key session
// (common/secagg/session.h), whose roster is the setup's n devices in every
// round; round 2's participants are then the |U1| announced, and the
// survivor minimum is taken of them.
std::string SessionRefusal(const SecAggExpectations& e, int round,
                           const secagg::SessionConfig& session, int64_t round1_survivors,
                           bool key_session = false);

// The devices a round is over: the roster, or round 2 of a key session's |U1|.
int64_t RoundParticipants(int round, const secagg::SessionConfig& session, int64_t round1_survivors,
                          bool key_session);

// Empty if `announced` survivors (the consistency check's U3) reach `own_min`.
std::string SurvivorRefusal(int round, size_t announced, int64_t own_min);

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_SECAGG_GUARD_H_
