// Algorithm::kStatistics for a whole federation in one process (issue #53):
// the parties' releases (stats_release.h) with their noise shares
// (stats_plan.h), the sum secure aggregation would reveal, the public solve,
// and each party's final model chosen on its own validation ratings.
#ifndef FEDMF_COMMON_FMF_STATS_FEDERATION_H_
#define FEDMF_COMMON_FMF_STATS_FEDERATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/data/ratings.h"
#include "common/fmf/simulator.h"
#include "common/fmf/stats_config.h"
#include "common/fmf/stats_release.h"

namespace fedmf::fmf {

// The party's validation split for kStatistics: each training rating is held
// out with probability `fraction`, decided by a keyed hash of its (user,
// item) alone, so adding or removing one rating — or all of one user's —
// never moves another rating in or out (the per-rating analysis needs that;
// a per-user count, as data::HoldOutPerUser draws, changes with the user's
// other ratings). Moves the held-out ratings out of `train` and returns them.
std::vector<data::Rating> HoldOutByRatingHash(std::vector<data::Rating>& train, double fraction,
                                              uint64_t key);

// The options of a release of dimension `dim` as the job's parties compute
// it (the sensitivity tests use the same).
stats::FitOptions ReleaseFitOptions(const StatsConfig& config);
stats::StatsOptions ReleaseStatsOptions(const StatsConfig& config, bool per_rating, int32_t dim);

// The number of factor releases of a per-user job whose factor_releases is 0,
// chosen from its bias release `bias_sum` (public once released): the largest
// T <= 5 for which the median column's noisy weighted count is at least 6
// noise sigmas of one of T factor releases (at least 1). Data sets with many
// raters per column get more alternations at the same epsilon. Choosing the
// split of the remaining budget from earlier outputs keeps the job mu-GDP:
// GDP composes with the same parameters under fully adaptive choices (Smith
// and Thakurta 2022).
absl::StatusOr<int32_t> AdaptiveFactorReleases(const JobConfig& config, int32_t parties,
                                               const stats::Statistics& bias_sum);

// Runs a kStatistics job (HFL: rows are a party's users; VFL: its items) on
// `federation`. Party k's randomness: FromOptionalSeed(config.seed) forked
// "party-<k>"; the public model's random start: "public". The result's
// `stats_plan` has both guarantees; each party's model_kind says what its
// validation chose.
absl::StatusOr<SimulationResult> SimulateStatistics(const JobConfig& config,
                                                    data::Federation federation);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_STATS_FEDERATION_H_
