#include "client-device/secagg_guard.h"

#include "absl/strings/str_cat.h"
#include "common/lfl/two_round_dp.h"

namespace fedmf::device {

int64_t OwnMinSurvivors(const SecAggExpectations& e, size_t roster_size) {
  return lfl::MinSurvivors(
      lfl::TwoRoundParams{static_cast<int64_t>(roster_size), e.omega, /*sigma_v=*/0});
}

int64_t RoundParticipants(int round, const secagg::SessionConfig& s, int64_t round1_survivors,
                          bool key_session) {
  if (key_session && round == 2) return round1_survivors;
  return static_cast<int64_t>(s.roster.size());
}

std::string SessionRefusal(const SecAggExpectations& e, int round, const secagg::SessionConfig& s,
                           int64_t round1_survivors, bool key_session) {
  if (key_session && !e.allow_key_session) {
    return "the server opened a key session in a job whose spec has none (secagg_session)";
  }
  if (e.require_active && !s.consistency_check) {
    return "the server opened a semi-honest aggregation (no consistency check, unsigned keys); "
           "this host's policy requires active secure aggregation (require_active_secagg)";
  }
  const int64_t roster = static_cast<int64_t>(s.roster.size());
  if (round == 1) {
    if (roster != e.num_devices) {
      return absl::StrCat("round 1 roster has ", roster,
                          " devices; the job has n = ", e.num_devices);
    }
  } else if (round == 2) {
    const int64_t need = OwnMinSurvivors(e, static_cast<size_t>(e.num_devices));
    if (round1_survivors < need || round1_survivors > e.num_devices) {
      return absl::StrCat("the server announces |U1| = ", round1_survivors,
                          " round-1 survivors; this device needs ", need,
                          " <= |U1| <= n = ", e.num_devices, " (ceil((1 - omega) n), omega ",
                          e.omega, ")");
    }
    if (key_session && roster != e.num_devices) {
      return absl::StrCat("round 2 of a key session over a roster of ", roster,
                          " devices; the job has n = ", e.num_devices);
    }
    if (!key_session && roster > round1_survivors) {
      return absl::StrCat("round 2 roster has ", roster,
                          " devices, more than |U1| = ", round1_survivors);
    }
  } else {
    return absl::StrCat("round ", round, " (expected 1 or 2)");
  }
  const int64_t participants = RoundParticipants(round, s, round1_survivors, key_session);
  const int64_t own = OwnMinSurvivors(e, static_cast<size_t>(participants));
  if (s.min_survivors < own) {
    return absl::StrCat("round ", round, " session lets the server unmask with ", s.min_survivors,
                        " survivors of ", participants, "; this device needs at least ceil((1 - ",
                        "omega) * ", participants, ") = ", own);
  }
  return "";
}

std::string SurvivorRefusal(int round, size_t announced, int64_t own_min) {
  if (static_cast<int64_t>(announced) >= own_min) return "";
  return absl::StrCat("round ", round, ": the server announces ", announced,
                      " survivors of the masking step (U1 of LFL round ", round,
                      "), fewer than this device's minimum ", own_min,
                      " (ceil((1 - omega) n)); no unmasking share is released");
}

}  // namespace fedmf::device
