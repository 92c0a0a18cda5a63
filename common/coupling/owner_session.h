// A data owner's side of a coupling job over the daemons (fedmf-party), as
// an explicit state machine with no I/O:
//
//   kTraining --RunStep(t, model)*--> --Finish(final model)--> kFinished
//
// Each round the server (A) sends the whole model; the owner samples its
// ratings (Poisson, q), sums their clipped gradients (C), adds its own
// N(0, (z C)^2) to every coordinate, charges its ledger, and only then
// returns the noisy sum to be sent (dp_step.h; docs/privacy.md, section
// coupling). Nothing the server sends can raise the sensitivity: every
// sample's gradient is clipped to C whatever the model holds, so the model
// is checked only for its shape (the owner's own m, n, d) and finiteness.
// The owner's ratings, its sampling and its noise never leave this object.
#ifndef FEDMF_COMMON_COUPLING_OWNER_SESSION_H_
#define FEDMF_COMMON_COUPLING_OWNER_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coupling/flat_model.h"
#include "common/coupling/train.h"
#include "common/data/ratings.h"
#include "common/dp/ledger.h"
#include "common/mf/metrics.h"
#include "common/random/csprng.h"

namespace fedmf::coupling {

class OwnerSession {
 public:
  enum class Phase { kTraining, kFinished };

  // What the owner runs, all of it its own decision (the party admits the
  // server's offer into these terms; party/party_agent.cc).
  struct Terms {
    std::string job_id;
    // noise_multiplier is the owner's own z, calibrated by its own
    // accountant to its budget (0 = non-private); `epochs` is not used.
    CouplingOptions options;
    int32_t rounds = 0;       // the job's DP steps; a later round is refused
    data::RatingRange range;  // the owner's declared range; r0 is its midpoint
  };

  // `train` and `test` in the layout's global indices, values inside
  // `range`. `ledger` is not owned and must outlive the session. `rng` is the
  // owner's own stream (sampling and noise fork from it).
  static absl::StatusOr<std::unique_ptr<OwnerSession>> Create(Terms terms, FlatLayout layout,
                                                              std::vector<data::Rating> train,
                                                              std::vector<data::Rating> test,
                                                              dp::PrivacyLedger* ledger,
                                                              random::Csprng rng);

  // One DP step at the server's model: the noisy clipped sum (1 x P, as
  // FlattenSum; each value snapped to its binade's grid,
  // dp::SnapInBinadeTowardZero, and so exact in float32), charged to the
  // ledger first (one step at (q, z), key
  // `round`) — if the budget refuses, nothing is returned. Rounds only move
  // forward: a missed round is skipped and costs nothing; an earlier or
  // repeated round is refused, as is a round >= Terms::rounds.
  absl::StatusOr<mf::Matrix> RunStep(int32_t round, const mf::Matrix& flat_model);
  // Keeps the final model (no release, no charge).
  absl::Status Finish(const mf::Matrix& flat_model);

  // The pre-noise sum of `batch`'s clipped gradients at `flat_model`, as
  // RunStep would noise it (for the sensitivity tests; no randomness, no
  // charge).
  absl::StatusOr<mf::Matrix> PreNoiseRelease(const std::vector<data::Rating>& batch,
                                             const mf::Matrix& flat_model) const;

  Phase phase() const { return phase_; }
  int32_t next_round() const { return next_round_; }
  int64_t steps_charged() const { return steps_charged_; }
  double noise_multiplier() const { return terms_.options.noise_multiplier; }
  const FlatLayout& layout() const { return layout_; }

  // Error on the owner's test ratings with the last model received (empty
  // before any).
  mf::ErrorMetrics EvaluateTest() const;
  // Top-N items for a user (global index), best first: (item, predicted
  // rating clamped to the range). Items the owner holds a rating of for that
  // user are left out unless `include_rated`. FailedPrecondition before a
  // model arrived; NotFound for a user this owner holds no rating of (the
  // model covers every owner's users).
  absl::StatusOr<std::vector<std::pair<int32_t, double>>> Recommend(int32_t user, int32_t top_n,
                                                                    bool include_rated) const;

 private:
  OwnerSession(Terms terms, FlatLayout layout, std::vector<data::Rating> train,
               std::vector<data::Rating> test, dp::PrivacyLedger* ledger, random::Csprng rng);

  absl::StatusOr<CouplingModel> Adopt(const mf::Matrix& flat_model) const;
  // The pre-noise release: `batch`'s gradients at `model`, each clipped to C.
  GradientSum ClippedSum(const CouplingModel& model, const std::vector<data::Rating>& batch) const;

  Terms terms_;
  FlatLayout layout_;
  std::vector<data::Rating> train_;
  std::vector<data::Rating> test_;
  dp::PrivacyLedger* ledger_;
  random::Csprng sample_rng_;
  random::Csprng noise_rng_;
  Phase phase_ = Phase::kTraining;
  int32_t next_round_ = 0;
  int64_t steps_charged_ = 0;
  std::optional<CouplingModel> model_;  // the last model received
};

}  // namespace fedmf::coupling

#endif  // FEDMF_COMMON_COUPLING_OWNER_SESSION_H_
