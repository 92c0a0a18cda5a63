// Runs LFL jobs (server/lfl/lfl_job.h) for fedmf-server: one active LFL job at a
// time, a lifecycle thread (server/lifecycle_loop.h) that closes phases at their deadlines, the
// device hosts' long poll, and persistence of every state change and iteration
// (server/lfl/lfl_store.h). Thread-safe; the gRPC edge is server/lfl/device_service.h.
#ifndef FEDMF_SERVER_LFL_LFL_COORDINATOR_H_
#define FEDMF_SERVER_LFL_LFL_COORDINATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fedmf/v1/device.pb.h"
#include "fedmf/v1/federation.pb.h"
#include "server/clock.h"
#include "server/job_runner.h"
#include "server/lfl/lfl_job.h"
#include "server/lfl/lfl_store.h"
#include "server/lifecycle_loop.h"
#include "server/size_limits.h"

namespace fedmf::server {

struct LflCoordinatorOptions {
  absl::Duration poll = absl::Seconds(2);       // long-poll length
  absl::Duration liveness = absl::Seconds(10);  // a host silent longer is not waited for
  SizeLimits limits;                            // server/size_limits.h
  // Threads each secure aggregation's unmasking may use (the server's one
  // long step per aggregation: recovering every survivor's self-mask seed
  // and stripping the masks). The sum is the same with any value.
  int unmasking_threads = 1;
  const Clock* clock = nullptr;  // protocol time (server/clock.h); null = the real clock
};

// The LFL runner (server/job_runner.h).
class LflCoordinator final : public JobRunner {
 public:
  LflCoordinator(LflStore* store, LflCoordinatorOptions options);
  ~LflCoordinator() override;

  std::string_view kind() const override { return "lfl"; }
  bool Takes(v1::Setting setting) const override { return setting == v1::SETTING_LFL; }

  // Marks LFL jobs a previous run left running as failed, starts the runner.
  absl::Status Start() override;
  void Stop() override;

  // ---- operators
  absl::StatusOr<std::string> SubmitJob(const v1::JobSpec& spec,
                                        const std::string& submitter = "") override;
  // NotFound if the id is no LFL job.
  absl::StatusOr<v1::JobStatus> GetJob(const std::string& job_id) override;
  // Every LFL job, oldest first.
  absl::StatusOr<std::vector<std::string>> JobIds() override;
  const SizeLimits& limits() const { return options_.limits; }

  // ---- device hosts (already authenticated as `host`)
  absl::StatusOr<v1::DeviceTask> GetTask(const std::string& host, const v1::HostHello& hello);
  absl::StatusOr<mf::Matrix> Model(const std::string& host, const std::string& job_id,
                                   int32_t iteration);
  absl::StatusOr<std::vector<v1::InboxMessage>> Inbox(const std::string& host,
                                                      const v1::BatchHeader& header);
  // OK if `host` is granted a device in the active job: checked before a
  // submission's first message is read. The refusal is the same with no
  // job, another job, or a job without the host.
  absl::Status ExpectsSubmitFrom(const std::string& host);
  absl::Status CheckBatch(const std::string& host, const v1::BatchHeader& header);
  // A non-OK result names why that one device was dropped.
  absl::Status SubmitOne(const std::string& host, const v1::BatchHeader& header,
                         const v1::DeviceMessage& message);
  void EndSubmit(const std::string& host, const v1::BatchHeader& header);
  absl::Status ReportMetrics(const std::string& host, const v1::DeviceMetricsReport& report);

 private:
  // The active job's phases up to `now`, each persisted; whether any closed.
  bool AdvanceLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the active job (if any) as failed with `why`, persisted.
  void FailLocked(const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PersistLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ActiveLocked(const std::string& job_id) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // PermissionDenied, the same for no job, an ended one and one that grants
  // `host` nothing.
  absl::Status GrantedLocked(const std::string& host) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  v1::JobStatus StatusLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  LflStore* store_;  // not owned; outlives this
  LflCoordinatorOptions options_;
  mutable absl::Mutex mu_;
  // Closes phases at their deadlines (every 100 ms) and holds the hosts'
  // long polls; Notify()d on every state change.
  LifecycleLoop loop_;
  std::unique_ptr<LflJob> job_ ABSL_GUARDED_BY(mu_);
  LflJob::Stage persisted_stage_ ABSL_GUARDED_BY(mu_) = LflJob::Stage::kJoining;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_LFL_LFL_COORDINATOR_H_
