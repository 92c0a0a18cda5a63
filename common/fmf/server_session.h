// The coordination server's side of Stage 2 as an explicit state machine (no
// I/O): it owns the shared matrix, accepts at most one validated update per
// party per round, and closes a round with the paper's weighted average over
// the parties that answered (VFL: m_k/m, HFL: n_k/n, renormalized over the
// contributors). A coupling job (Setting::kCoupling) instead holds the
// whole coupling model as its shared matrix (coupling/flat_model.h) and closes
// a round with the paper's step on the plain sum of the owners' noisy
// gradient sums (Algorithm 1, lines 12-15).
//
//   kRoundOpen(t) --SubmitUpdate*--> --CloseRound--> kRoundOpen(t+1) ... kFinished
#ifndef FEDMF_COMMON_FMF_SERVER_SESSION_H_
#define FEDMF_COMMON_FMF_SERVER_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coupling/flat_model.h"
#include "common/fmf/job_config.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

struct PartyInfo {
  std::string name;
  double weight = 0;  // m_k (VFL) or n_k (HFL): sizes the parties declare
};

// No declared weight may exceed this many times the median of the other
// averaged parties' weights: a party cannot make its update the average by
// declaring a huge size (docs/privacy.md, size-release).
inline constexpr double kMaxWeightRatio = 4.0;

// The averaging weights the server uses: each declared weight capped at
// kMaxWeightRatio x the median of the others' (`averaged[k]` false: party k
// is not averaged, e.g. it refused; its weight is kept as is and ignores the
// others). Deterministic, so a restored job gets the same weights.
std::vector<double> CappedWeights(const std::vector<double>& declared,
                                  const std::vector<bool>& averaged);

struct RoundSummary {
  int32_t round = 0;
  std::vector<int32_t> contributors;  // party indices averaged this round
  std::vector<int32_t> missing;       // parties that did not answer
};

class ServerSession {
 public:
  enum class Phase { kRoundOpen, kFinished };

  // A fresh job: the initial shared matrix (shared_rows x dim) is drawn here.
  static absl::StatusOr<ServerSession> Create(const JobConfig& config, int32_t shared_rows,
                                              std::vector<PartyInfo> parties, random::Csprng& rng);
  // A fresh coupling job over the model of `layout` (drawn here).
  static absl::StatusOr<ServerSession> CreateCoupling(const JobConfig& config,
                                                      const coupling::FlatLayout& layout,
                                                      std::vector<PartyInfo> parties,
                                                      random::Csprng& rng);
  // Resume after a restart at `round` (the next round to run) with the shared
  // matrix persisted when round-1 closed; a coupling job passes its layout.
  static absl::StatusOr<ServerSession> Restore(
      const JobConfig& config, std::vector<PartyInfo> parties, int32_t round, mf::Matrix shared,
      const std::optional<coupling::FlatLayout>& layout = std::nullopt);

  Phase phase() const { return phase_; }
  int32_t round() const { return round_; }
  int32_t total_rounds() const { return config_.EffectiveRounds(); }
  // The matrix to broadcast for the open round (or the final one).
  const mf::Matrix& shared() const { return *shared_; }
  // The same matrix as an immutable snapshot, to hand out without a copy:
  // a new object whenever the matrix changes, so holders of an older one
  // keep its values and one pointer never stands for two matrices.
  std::shared_ptr<const mf::Matrix> shared_snapshot() const { return shared_; }
  const std::vector<PartyInfo>& parties() const { return parties_; }
  bool HasSubmitted(int32_t party) const;

  // Validates everything about an update before keeping it: phase, round,
  // party index, one update per party per round, shape, finiteness and the
  // clipping invariant (entries >= 0, row norm <= sqrt(R)), so one bad party
  // cannot poison the average. Errors name the field. A coupling update is a
  // noisy sum (Gaussian noise has no bound): shape and finiteness only.
  absl::Status SubmitUpdate(int32_t party, int32_t round, const mf::Matrix& update);

  // Averages the updates received for the open round and opens the next.
  // FailedPrecondition if nobody answered (the round stays open).
  absl::StatusOr<RoundSummary> CloseRound();

 private:
  ServerSession(const JobConfig& config, std::vector<PartyInfo> parties, mf::Matrix shared,
                int32_t round);
  absl::Status CheckEmbeddingUpdate(const mf::Matrix& update) const;
  // The next shared matrix from this round's updates (`contributors` sent one).
  absl::StatusOr<mf::Matrix> Aggregate(const std::vector<int32_t>& contributors) const;

  JobConfig config_;
  std::vector<PartyInfo> parties_;
  std::shared_ptr<const mf::Matrix> shared_;  // never null
  int32_t round_ = 0;
  Phase phase_ = Phase::kRoundOpen;
  // This round's validated updates, summed in party order at CloseRound so the
  // result does not depend on arrival order (bit-for-bit reproducible).
  std::vector<std::optional<mf::Matrix>> updates_;
  std::optional<coupling::FlatLayout> coupling_;  // set for Setting::kCoupling only
};

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_SERVER_SESSION_H_
