// The server's side of one FMF job (VFL- or HFL-SGDMF over fedmf-party
// daemons): an explicit state machine, no gRPC, no threads, no storage and
// no clock of its own (the caller passes `now` and who is still awaited).
// server/fmf/job_coordinator.h wraps it with a lock, the long poll, liveness and
// persistence, as server/lfl/lfl_coordinator.h wraps server/lfl/lfl_job.h.
//
//   WAITING  -- every roster party replied to the offer, or the offer
//               deadline passed --> RUNNING (enough acceptors) | failed
//     (align_users: first every roster party accepts, then the private set
//      intersection runs, then the parties reply with their aligned sizes)
//   RUNNING(round t < T) -- every awaited acceptor uploaded, or the round
//               deadline passed --> weighted average --> RUNNING(t + 1)
//   RUNNING(round T) -- every awaited acceptor finished Stage 3, or the
//               finish deadline passed --> finished
// Each transition Advance makes is returned as a Step the caller must persist
// (server/fmf/server_store.h) before the job goes on; a party's next task is a
// pure function of the state (TaskFor), so a party that reconnects or
// restarts simply asks again.
#ifndef FEDMF_SERVER_FMF_FMF_JOB_H_
#define FEDMF_SERVER_FMF_FMF_JOB_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/coupling/flat_model.h"
#include "common/fmf/job_config.h"
#include "common/fmf/server_session.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"
#include "fedmf/v1/federation.pb.h"
#include "server/fmf/psi_alignment.h"
#include "server/fmf/stored_job.h"
#include "server/size_limits.h"

namespace fedmf::server {

struct FmfJobOptions {
  absl::Duration offer_deadline = absl::Seconds(60);
  absl::Duration finish_deadline = absl::Seconds(120);
  // Used when the spec's round_deadline_seconds is 0.
  absl::Duration default_round_deadline = absl::Seconds(120);
  // Upper bounds on what a party or operator may declare (server/size_limits.h).
  SizeLimits limits;
  // Local reproducibility seed of the server's own randomness, the initial
  // shared matrix (the simulator's derivation: root seed -> "server"); unset
  // = OS entropy. Jobs never carry one.
  std::optional<uint64_t> seed;
};

class FmfJob {
 public:
  // One transition made by Advance, for the caller to persist.
  struct Step {
    enum class Kind {
      kNone,         // nothing was due
      kChanged,      // in memory only (the user alignment opened)
      kStarted,      // WAITING -> RUNNING: store the initial shared matrix
      kRoundClosed,  // store `record` with the new shared matrix, atomically
      kFinished,     // store FINISHED; the job is over
      kFailed,       // store FAILED with `error`; the job is over
    };
    Kind kind = Kind::kNone;
    v1::RoundRecord record;  // kRoundClosed
    std::string error;       // kFailed
  };

  // A stored job made runnable: its spec and every stored reply checked
  // against the limits (a stored state that passed at submission fails here
  // only if the code or the limits changed underneath), and a RUNNING job's
  // session restored from its stored round and matrix. `now` starts the
  // current phase's clock; `rng` draws the alignment session names.
  static absl::StatusOr<FmfJob> Restore(StoredJob stored, FmfJobOptions options, absl::Time now,
                                        random::Csprng rng);

  const std::string& id() const { return stored_.spec.job_id(); }
  const StoredJob& stored() const { return stored_; }
  // Whether Stage 2 started (a failure then aborts an aggregation).
  bool started() const { return session_.has_value(); }

  // `party`'s roster index for a message about `job_id`: FailedPrecondition
  // if that is not this job, PermissionDenied if the party is not listed.
  absl::StatusOr<int32_t> RosterIndex(const std::string& party, const std::string& job_id) const;
  // The one refusal a party outside the job gets, whatever job it named.
  static absl::Status NotInJob(const std::string& party, const std::string& job_id);
  // What `party` should do next in this job (IDLE when nothing).
  v1::Task TaskFor(const std::string& party) const;

  // An offer reply of roster party `idx`. Returns the party's record to
  // store, or nullopt when nothing is to be stored yet (the first, sizeless
  // acceptance of an align_users job).
  absl::StatusOr<std::optional<StoredParty>> ReplyOffer(int32_t idx, const v1::OfferReply& reply);
  // The input matrix of `round` (round T = the final matrix for Stage 3),
  // the session's immutable snapshot (ServerSession::shared_snapshot).
  absl::StatusOr<std::shared_ptr<const mf::Matrix>> SharedFor(int32_t idx, int32_t round) const;
  // Shape an upload for `round` must have.
  absl::StatusOr<std::pair<int32_t, int32_t>> UploadShape(int32_t idx, int32_t round) const;
  // Whether roster party `idx` may upload at all (it accepted, Stage 2 began).
  bool TakesUpdatesFrom(int32_t idx) const {
    return session_.has_value() && stored_.parties[idx].accepted;
  }
  // An upload for `round`; refused (nothing changes) unless that round is open
  // and the matrix is well-formed (fmf::ServerSession::SubmitUpdate).
  absl::Status SubmitUpdate(int32_t idx, int32_t round, const mf::Matrix& update);
  // A privacy report, validated: the history entry to store. Nothing changes
  // until ApplyReport, once it is stored.
  absl::StatusOr<v1::PartyRoundReport> CheckReport(int32_t idx,
                                                   const v1::PrivacyReport& report) const;
  // The party's record after the report, to store first.
  StoredParty PartyAfterReport(int32_t idx, const v1::PrivacyReport& report) const;
  // Applies what was stored: `after` (PartyAfterReport) becomes the party's
  // record and `history` its report of `round`, so memory holds exactly the
  // stored state. Returns the party's record.
  const StoredParty& ApplyReport(int32_t idx, int32_t round, StoredParty after,
                                 v1::PartyRoundReport history);
  // The align_users job's private set intersection (server/fmf/psi_alignment.h).
  absl::Status PsiSend(int32_t idx, const v1::PsiSendRequest& request);
  absl::StatusOr<v1::PsiFetchResponse> PsiFetch(int32_t idx, const std::string& session);

  // Makes the transition due at `now`, if any. `awaited(party)`: whether a
  // round or Stage 3 should still wait for that party (it is live, or the
  // server restarted less than one liveness window ago).
  Step Advance(absl::Time now, absl::FunctionRef<bool(const std::string&)> awaited);

 private:
  FmfJob(StoredJob stored, fmf::JobConfig config, FmfJobOptions options, absl::Time now,
         random::Csprng rng);

  Step AdvanceAlignment(absl::Time now, bool* waiting);
  Step AdvanceOffer(absl::Time now);
  Step AdvanceRound(absl::Time now, absl::FunctionRef<bool(const std::string&)> awaited);
  Step AdvanceFinish(absl::Time now, absl::FunctionRef<bool(const std::string&)> awaited);
  // Each party's averaging weight as the session uses it: the declared one
  // (DP or declared public), capped (fmf::CappedWeights); acceptors only.
  std::vector<fmf::PartyInfo> AveragingWeights() const;
  absl::Status StartRunning();
  // A coupling job's model over (users x items), refused over the limits.
  absl::StatusOr<coupling::FlatLayout> BoundedCouplingLayout(int64_t users, int64_t items) const;
  // A coupling job's model layout, from its accepted owners' sizes (which
  // must agree); nullopt for the other settings.
  absl::StatusOr<std::optional<coupling::FlatLayout>> CouplingLayout() const;
  static Step Failed(std::string why);

  StoredJob stored_;
  fmf::JobConfig config_;
  FmfJobOptions options_;
  random::Csprng rng_;
  std::optional<fmf::ServerSession> session_;
  absl::Time phase_started_;
  absl::Duration round_deadline_;
  std::map<std::string, int32_t> index_;  // party name -> roster index
  // align_users jobs: who accepted the offer (sizes follow after the
  // alignment, in a second reply), and the alignment once all did. Kept in
  // memory only: a restarted server offers the job again and the parties run
  // a new intersection under a new session.
  std::set<std::string> psi_accepted_;
  std::optional<PsiAlignment> psi_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_FMF_FMF_JOB_H_
