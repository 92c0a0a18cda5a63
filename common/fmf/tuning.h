// Choosing a job's learning rate without touching the parties' ratings
// (issue #16, `fedmf train --tune`): the job runs on a synthetic proxy of a
// DECLARED shape (users, items, rating count — public values the operator
// states, e.g. a published data set's sizes — with the job's range, test
// fraction and party count) for every rate of a grid, and the rate with the
// lowest test MSE *on the proxy* wins. Nothing of the parties' data enters:
// not their ratings, and not their sizes either — the exact rating count is
// private (removing one rating flipped the chosen rate 0.1 -> 0.486 when the
// proxy was built from it, issue #54). So the choice costs no privacy budget
// and never reads the real test set (docs/privacy.md, section tuning). Pure:
// no clock, no I/O.
#ifndef FEDMF_COMMON_FMF_TUNING_H_
#define FEDMF_COMMON_FMF_TUNING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/fmf/job_config.h"

namespace fedmf::fmf {

// The declared shape of a proxy: public values only.
struct ProxyShape {
  int32_t users = 0;
  int32_t items = 0;
  int64_t ratings = 0;  // train + test over all parties
};
// "users=N,items=M,ratings=R" (the value of `fedmf train --tune-shape`); the
// error names the key and the fix.
absl::StatusOr<ProxyShape> ParseProxyShape(const std::string& text);

// Synthetic ratings of `shape` in `range`, split as `config` splits them
// (`parties` parties, config.test_fraction held out for test; a VFL split is
// random, the proxy has no genres). `seed` drives the generator and the split.
// Takes no data: the proxy cannot depend on the parties' ratings or sizes.
absl::StatusOr<data::Federation> ProxyOfShape(const ProxyShape& shape, data::RatingRange range,
                                              int32_t parties, const JobConfig& config,
                                              uint64_t seed);

// The grid `fedmf train --tune` searches for `config`: HFL and HFL-synSGD
// with per-user clipping the noise-aware rule (0) and per-user steps 0.1 to
// 10; otherwise the setting's rate times 1/4 to 4.
std::vector<double> LearningRateGrid(const JobConfig& config);

struct TuneCandidate {
  double learning_rate = 0;  // as JobConfig::learning_rate (0 = the rule)
  double proxy_test_mse = 0;
};

struct TuneResult {
  double learning_rate = 0;  // the candidate with the lowest proxy test MSE
  std::vector<TuneCandidate> grid;
};

// Runs `config` with each rate of `grid` on `proxy` (ProxyOfShape). A
// candidate whose run fails or diverges (non-finite MSE) loses; all failing
// is an error naming the first failure. While the best rate is the grid's
// largest (> 0), the grid goes on doubling it, at most `max_doublings` times
// and only while each double lowers the proxy MSE by at least 0.1 % (a flat
// proxy does not walk the rate up for nothing), so a proxy that wants larger
// steps than the grid offers gets them.
absl::StatusOr<TuneResult> TuneLearningRateOnProxy(const JobConfig& config,
                                                   const data::Federation& proxy,
                                                   const std::vector<double>& grid,
                                                   int max_doublings = 8);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_TUNING_H_
