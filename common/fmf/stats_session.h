// Algorithm stats as one explicit state machine per role (issue #53), free of
// I/O: what a party daemon and the coordination server will run over the
// network, and what the in-process run (stats_federation.h) drives today.
//
//   server: Create --(current release, public model)--> parties
//   party:  Create, then Release(t) per release: its noisy, snapped share
//   (secure aggregation among the parties: the server learns the sum only)
//   server: Close(sum) -> the next public model (after the bias release the
//           number of factor releases is chosen from the public sum)
//   party:  Finish(last sum, final public model) -> its own model, chosen on
//           its own validation ratings; nothing more leaves it.
#ifndef FEDMF_COMMON_FMF_STATS_SESSION_H_
#define FEDMF_COMMON_FMF_STATS_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/fmf/job_config.h"
#include "common/fmf/simulator.h"
#include "common/fmf/stats_plan.h"
#include "common/fmf/stats_release.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

class StatsServerSession {
 public:
  // `parties` parties share `num_cols` columns around `centre` (public).
  // `public_rng` draws the public model's random start (a job-wide stream).
  static absl::StatusOr<StatsServerSession> Create(const JobConfig& config, int32_t parties,
                                                   int32_t num_cols, double centre,
                                                   random::Csprng public_rng);
  bool done() const { return next_ >= plan_.releases.size(); }
  // The release the parties compute next, its plan and the public model they
  // fit against (valid until done()).
  int32_t release() const { return static_cast<int32_t>(next_); }
  const StatsReleasePlan& current() const { return plan_.releases[next_]; }
  const stats::PublicModel& model() const { return model_; }
  const StatsPlan& plan() const { return plan_; }
  // The parties' summed shares of the current release: the next public model
  // (and, after an adaptive bias release, the rest of the plan). The sum must
  // have the current release's shape.
  absl::Status Close(const stats::Statistics& sum);
  // The last release's sum, which every party receives for its own model.
  const stats::Statistics& last_sum() const { return last_sum_; }

 private:
  StatsServerSession(JobConfig config, int32_t parties, StatsPlan plan, stats::PublicModel model,
                     random::Csprng public_rng, bool adaptive);
  void ExtendForCurrent();

  JobConfig config_;
  int32_t parties_ = 0;
  StatsPlan plan_;
  stats::PublicModel model_;
  random::Csprng public_rng_;
  bool adaptive_ = false;
  size_t next_ = 0;
  stats::Statistics last_sum_;
};

class StatsPartySession {
 public:
  // Party `data` (local indices; its columns are the federation's
  // `num_cols`), `rng` its own stream: the validation split, its noise and
  // its own model's random start.
  static absl::StatusOr<std::unique_ptr<StatsPartySession>> Create(const JobConfig& config,
                                                                   data::PartyData data,
                                                                   int32_t num_cols, double centre,
                                                                   random::Csprng rng);
  // Release t: its rows fitted against `model` (checked: num_cols columns and
  // at least the release's dimension — the server's model is never trusted
  // for shape), the statistics, its noise share added and snapped. The share
  // is kept for Finish.
  absl::StatusOr<stats::Statistics> Release(int32_t t, const StatsReleasePlan& release,
                                            bool per_rating, const stats::PublicModel& model);
  // The largest |number| its share of `release` can hold (public: its index
  // size and the plan), for the secure aggregation's fixed point.
  double MaxAbs(const StatsReleasePlan& release, bool per_rating) const;
  // After the last release: the others' statistics are `sum` minus its own
  // share; it fits its own model alone and fused with them, and keeps the
  // one its validation ratings choose (refit on all its training ratings).
  absl::Status Finish(const stats::Statistics& sum, const stats::PublicModel& model,
                      const StatsPlan& plan);
  // Its metrics, choice and model (after Finish), as the simulator reports
  // them; the embeddings move out.
  PartyResult TakeResult(int32_t party, double epsilon, int64_t releases);

 private:
  StatsPartySession() = default;

  JobConfig config_;
  bool by_user_ = true;
  data::RatingRange range_;
  int32_t users_ = 0, items_ = 0, num_cols_ = 0;
  double centre_ = 0;
  std::vector<data::Rating> validation_, test_, all_train_;
  stats::Rows fit_rows_, all_rows_;
  random::Csprng rng_ = random::Csprng::FromSeed(0);
  stats::Statistics share_;  // its noisy share of the last release
  // After Finish.
  std::optional<stats::PartyModel> model_;
  double validation_mse_ = 0;
  std::string model_kind_;
  double others_weight_ = 0;
};

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_STATS_SESSION_H_
