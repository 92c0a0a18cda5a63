// The collaboration gain (issue #16): how much of what pooling the data would
// give a federation actually captures, all three MSEs on the same test split.
#ifndef FEDMF_COMMON_FMF_GAIN_H_
#define FEDMF_COMMON_FMF_GAIN_H_

#include <optional>

#include "absl/status/statusor.h"
#include "common/data/partition.h"

namespace fedmf::fmf {

// (mse_local - mse_federated) / (mse_local - mse_central). 1 = as good as
// pooling, 0 = no better than each party alone, < 0 = worse than alone, > 1
// = better than the central baseline. Unset when the ratio has no meaning:
// a non-finite input, or pooling no better than local (mse_central >=
// mse_local), where any federated result would divide by zero or flip sign.
std::optional<double> GainCaptured(double mse_local, double mse_federated, double mse_central);

// The federation's parties merged into one party holding every rating with
// the same train / test membership: the central baseline on the SAME split
// (re-partitioning would draw another test set). Parties' local ids are
// mapped to global ids, so the pooled party's index space is the global one.
absl::StatusOr<data::Federation> PoolFederation(const data::Federation& federation);

}  // namespace fedmf::fmf

#endif  // FEDMF_COMMON_FMF_GAIN_H_
