// The party-side trust boundary. A job configuration that arrives from the
// server (a JobSpec) is an offer, not an instruction: AdmittedJob is the only
// form of a job PartySession accepts, and it can only be built by Admit(),
// which replaces or checks every value that reaches the DP mechanism:
//
//   rating range  -> the party's own declared range (the job's rating_max must
//                    agree with it, or the job is refused before data is read);
//                    clipping bound R and the sensitivity derive from it only
//   randomness    -> the party's own: OS entropy, or a LOCAL reproducibility
//                    seed (party config / the CLI that started the process)
//                    forked by the job id (no two jobs share a stream);
//                    never a value from the job
//   noise plan    -> recomputed locally from the validated job
//   policy/budget -> the caller's decision (party policy + ledger) on the
//                    validated job and plan; refused jobs never get a session
//
// Negative ratings: the sensitivity 2 R^{3/2} (common/mf/clipping.h) needs
// every rating in [0, R]. A range [min, max] with min < 0 is shifted by
// offset = min, so ratings live in [0, max - min] and R = max - min;
// predictions add the offset back. For min >= 0 the offset is 0 and R = max.
#ifndef FEDMF_COMMON_FMF_ADMITTED_JOB_H_
#define FEDMF_COMMON_FMF_ADMITTED_JOB_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "common/fmf/noise_plan.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

// What the party itself knows, independent of the server.
struct LocalTerms {
  data::RatingRange range;       // the party's declared rating range
  std::optional<uint64_t> seed;  // local reproducibility seed; unset = OS entropy
  // Fork label of the party's stream under the seed; the job id is forked in
  // after it, so a seed never gives two jobs the same stream.
  std::string stream = "party-0";
  int32_t threads = 1;  // cores for local SGD epochs (mf::SgdOptions::threads)
  // Stage 3's validation-chosen fine-tuning padded to the job's epoch cap
  // (PartySession::FinetuneOnValidation): its duration, which a daemon's
  // report and heartbeats show, no longer tells how many epochs were chosen.
  // The daemons set it; the in-process simulator has no one to hide from.
  bool pad_stage3 = false;
};

// The party's policy on a validated job and its locally computed plan:
// empty = accept, otherwise the reason to refuse.
using AdmissionPolicy = std::function<std::string(const JobConfig&, const NoisePlan&)>;

// The offset subtracted from every rating (min(0, range.min)) and the clipping
// bound R = max - offset for a declared range.
double RatingOffset(const data::RatingRange& range);
double ClippingBound(const data::RatingRange& range);

class AdmittedJob {
 public:
  // Validates `offered`, checks its rating_max against local.range.max
  // (FailedPrecondition naming both), replaces R by ClippingBound(range),
  // drops any seed it carries, plans the noise and asks `policy`
  // (PermissionDenied with its reason). Never reads data.
  static absl::StatusOr<AdmittedJob> Admit(const JobConfig& offered, const LocalTerms& local,
                                           const AdmissionPolicy& policy);

  AdmittedJob(AdmittedJob&&) = default;
  AdmittedJob& operator=(AdmittedJob&&) = default;

  // The job as the party runs it: rating_max is the party's clipping bound R.
  const JobConfig& config() const { return config_; }
  const NoisePlan& plan() const { return plan_; }
  const data::RatingRange& range() const { return range_; }
  double rating_offset() const { return RatingOffset(range_); }
  // True when the stream comes from a local seed (reproducible, not private
  // against whoever knows the seed).
  bool seeded() const { return seeded_; }
  // Cores for the party's local SGD epochs (its own, never the server's).
  int32_t threads() const { return threads_; }
  bool pad_stage3() const { return pad_stage3_; }
  // The party's randomness; moved out once (by PartySession::Create).
  random::Csprng TakeRng() && { return std::move(rng_); }

 private:
  AdmittedJob(JobConfig config, NoisePlan plan, data::RatingRange range, random::Csprng rng,
              bool seeded, int32_t threads, bool pad_stage3)
      : config_(std::move(config)),
        plan_(plan),
        range_(range),
        rng_(std::move(rng)),
        seeded_(seeded),
        threads_(threads),
        pad_stage3_(pad_stage3) {}

  JobConfig config_;
  NoisePlan plan_;
  data::RatingRange range_;
  random::Csprng rng_;
  bool seeded_;
  int32_t threads_;
  bool pad_stage3_;
};

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_ADMITTED_JOB_H_
