// SimulateHua: one scenario of Hua et al. on a train/test split, against the
// non-private baseline from the same U(0), V(0), reporting what the paper
// reports (|prediction error| CDF, mean increase over the baseline) plus
// test MSE/RMSE and per-iteration traffic.
#ifndef FEDMF_COMMON_HUA_SIMULATOR_H_
#define FEDMF_COMMON_HUA_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/hua/accounting.h"
#include "common/hua/error_cdf.h"
#include "common/hua/params.h"
#include "common/hua/protocol_driver.h"
#include "common/mf/metrics.h"

namespace fedmf::hua {

struct HuaProgress {
  int32_t iteration = 0;
  int32_t total = 0;
  int32_t users = 0;  // users who took part in this iteration
  double seconds = 0;
  std::optional<double> test_mse;
};
using HuaProgressFn = std::function<void(const HuaProgress&)>;

struct HuaResult {
  HuaParams params;
  mf::ErrorMetrics test, train;
  mf::ErrorMetrics baseline_test, baseline_train;
  // Each user predicts her own mean training rating (nothing shared).
  mf::ErrorMetrics user_mean_test;
  // The privacy plan (accounting.h) and what the users spent: epsilon of
  // the user who released most (the job's `epsilon`), the median user's, and
  // the training ratings the users took part with (theta trimming).
  HuaPrivacy privacy;
  double epsilon = 0;
  double epsilon_median_user = 0;
  int64_t max_user_releases = 0;
  int64_t ratings_used = 0;
  int64_t users_on_mean = 0;  // chose b_i alone on their own held-out ratings
  // MAE minus the baseline's MAE: on the test ratings, and on the training
  // ratings R (the set the paper's figures use).
  double mean_abs_error_increase = 0;
  double train_mean_abs_error_increase = 0;
  ErrorCdf error_cdf, baseline_error_cdf;  // test ratings
  TrafficStats traffic;                    // zeros for S1 (no communication)
  double third_party_ms_per_iteration = 0;
  double mean_users_per_iteration = 0;
  int64_t dropped_users = 0;
  int64_t abandoned_item_updates = 0;
  double seconds = 0;
};

// `split`: one party holding every user and item with global indices, e.g.
// PartitionCentral(...).parties[0]. `params.scenario` is set to `scenario`.
// Deterministic in `seed` (apart from the timings).
absl::StatusOr<HuaResult> SimulateHua(Scenario scenario, const data::PartyData& split,
                                      HuaParams params, uint64_t seed,
                                      const HuaProgressFn& progress = nullptr,
                                      int32_t eval_every = 0);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_SIMULATOR_H_
