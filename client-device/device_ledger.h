// A device host's durable privacy ledger (SQLite, one file per host): one
// row per (device, job, iteration) whose round-1 input was released, written
// BEFORE the release. A device never releases twice for the same iteration
// (a replayed or repeated task is refused), never beyond its budget (the
// host policy's max_epsilon at its delta, every release of every job composed
// under RDP), and what it spent survives a restart of the host.
#ifndef FEDMF_CLIENT_DEVICE_DEVICE_LEDGER_H_
#define FEDMF_CLIENT_DEVICE_DEVICE_LEDGER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/store/sqlite.h"

namespace fedmf::device {

class DeviceLedger {
 public:
  // Every device's budget: epsilon at `delta`, over all its releases.
  struct Budget {
    double max_epsilon = 8.0;
    double delta = 1e-5;
    bool allow_non_private = false;  // charge releases without noise (epsilon = inf)
  };
  static absl::StatusOr<std::unique_ptr<DeviceLedger>> Open(const std::string& path, Budget budget);

  // Charges every device in `devices` for (job, iteration) in one
  // transaction; returns those that were charged now. Left out (they must
  // not release): a device already charged for that iteration, and one whose
  // budget this release would exceed (logged). A release without noise
  // (noise_multiplier 0, epsilon = inf) is charged only if the budget
  // allows non-private releases.
  absl::StatusOr<std::vector<uint64_t>> Charge(const std::vector<uint64_t>& devices,
                                               const std::string& job_id, int32_t iteration,
                                               double noise_multiplier);
  // The device's epsilon (at the budget's delta) over all its releases, plus
  // `extra_steps` more Gaussian releases with `extra_noise_multiplier`: the
  // admission check of a job plans its T releases with it.
  absl::StatusOr<double> EpsilonIf(uint64_t device, double extra_noise_multiplier,
                                   int64_t extra_steps) const;
  const Budget& budget() const { return budget_; }
  // Releases of `device` in `job_id` so far.
  absl::StatusOr<int64_t> Releases(uint64_t device, const std::string& job_id) const;
  // The largest number of releases of any device in `job_id`.
  absl::StatusOr<int64_t> MaxReleases(const std::string& job_id) const;

 private:
  DeviceLedger(std::unique_ptr<store::Database> db, Budget budget)
      : db_(std::move(db)), budget_(budget) {}
  std::unique_ptr<store::Database> db_;
  Budget budget_;
};

// A job's admission check against the ledger: empty if every device in
// [first, first + count) can afford `steps` more releases at noise
// multiplier z within the budget (z = 0: only if the budget allows
// non-private releases); otherwise why not, naming the first device that
// cannot (`what`: "device", "user").
std::string BudgetRefusal(const DeviceLedger& ledger, int64_t first, int64_t count, double z,
                          int64_t steps, const std::string& what);

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_DEVICE_LEDGER_H_
