// A device host's durable privacy ledger (SQLite, one file per host): one
// row per (device, job, iteration) whose round-1 input was released, written
// BEFORE the release. A device never releases twice for the same iteration
// (a replayed or repeated task is refused), and what it spent survives a
// restart of the host.
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
  static absl::StatusOr<std::unique_ptr<DeviceLedger>> Open(const std::string& path);

  // Charges every device in `devices` for (job, iteration) in one
  // transaction; returns those that were charged now (a device already
  // charged for that iteration is left out: it must not release again).
  absl::StatusOr<std::vector<uint64_t>> Charge(const std::vector<uint64_t>& devices,
                                               const std::string& job_id, int32_t iteration,
                                               double noise_multiplier);
  // Releases of `device` in `job_id` so far.
  absl::StatusOr<int64_t> Releases(uint64_t device, const std::string& job_id) const;
  // The largest number of releases of any device in `job_id`.
  absl::StatusOr<int64_t> MaxReleases(const std::string& job_id) const;

 private:
  explicit DeviceLedger(std::unique_ptr<store::Database> db) : db_(std::move(db)) {}
  std::unique_ptr<store::Database> db_;
};

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_DEVICE_LEDGER_H_
