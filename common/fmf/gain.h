// The collaboration gain (issue #16): how much of what pooling the data would
// give a federation actually captures, all three MSEs on the same test split.
#ifndef FEDMF_COMMON_FMF_GAIN_H_
#define FEDMF_COMMON_FMF_GAIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"

namespace fedmf::fmf {

// (mse_local - mse_federated) / (mse_local - mse_central). 1 = as good as
// pooling, 0 = no better than each party alone, < 0 = worse than alone, > 1
// = better than the central baseline. Unset when the ratio has no meaning:
// a non-finite input, or pooling no better than local (mse_central >=
// mse_local), where any federated result would divide by zero or flip sign.
std::optional<double> GainCaptured(double mse_local, double mse_federated, double mse_central);

// The spread of a gain over repeated runs (different seeds and splits):
// mean, sample standard deviation and the two-sided 95% Student-t interval
// of the mean, mean -+ t(0.975, n - 1) sd / sqrt(n). With one value sd and
// the interval are unset (no spread to measure).
struct GainSummary {
  int32_t count = 0;
  double mean = 0;
  std::optional<double> sd;
  std::optional<double> ci95_low, ci95_high;
};
// Over the values that are set; count 0 (mean NaN) when none is.
GainSummary SummarizeGains(const std::vector<std::optional<double>>& gains);

// Whether repeated runs tell a gain from zero (issue #56): kHelps when the
// 95% interval lies wholly above 0, kHurts when wholly below, otherwise
// kNotDistinguishable — also with one value (no interval: no spread measured)
// or an interval touching 0. kUndefined when no run had a gain (count 0).
enum class GainVerdict { kHelps, kHurts, kNotDistinguishable, kUndefined };
GainVerdict JudgeGain(const GainSummary& summary);
// "helps", "hurts", "not distinguishable", "undefined" (the JSON's gain_verdict).
const char* GainVerdictName(GainVerdict verdict);
// The sentence `fedmf train --repeats` and `fedmf advise` print, e.g.
// "joining helps: the 95% interval [3.1%, 12.0%] lies above 0 (3 repeats)" or
// "not distinguishable from training alone with 2 repeats: the 95% interval
// [-10.0%, 20.0%] contains 0".
std::string GainVerdictSentence(const GainSummary& summary);
// The 0.975 quantile of Student's t with `dof` >= 1 degrees of freedom
// (tabulated to 30, then the normal's 1.96 plus the first correction terms).
double StudentT975(int32_t dof);

// The federation's parties merged into one party holding every rating with
// the same train / test membership: the central baseline on the SAME split
// (re-partitioning would draw another test set). Parties' local ids are
// mapped to global ids, so the pooled party's index space is the global one.
absl::StatusOr<data::Federation> PoolFederation(const data::Federation& federation);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_GAIN_H_
