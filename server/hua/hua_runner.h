// Drives the server's Hua S3 jobs: one HuaS3Job state machine per job, a
// lifecycle thread (server/lifecycle_loop.h) that carries its actions to the aggregator (through
// the AggregatorLink interface, so tests can put the library ThirdParty behind it), and thread-safe
// entry points for the gRPC services. One job runs at a time; the others wait in submission order.
// Hua jobs live in memory only: a server restart fails them (documented in docs/hua.md).
#ifndef FEDMF_SERVER_HUA_HUA_RUNNER_H_
#define FEDMF_SERVER_HUA_HUA_RUNNER_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/hua/messages.h"
#include "fedmf/v1/hua.pb.h"
#include "server/clock.h"
#include "server/hua/hua_s3_job.h"
#include "server/job_runner.h"
#include "server/lifecycle_loop.h"

namespace fedmf::server {

// The server's view of fedmf-aggregator.
class AggregatorLink {
 public:
  virtual ~AggregatorLink() = default;
  virtual absl::Status Begin(const std::string& job_id, int32_t dim,
                             const hua::AggregationPlan& plan,
                             const std::map<int32_t, std::string>& hosts) = 0;
  virtual absl::StatusOr<hua::AggregateForward> Flush(const std::string& job_id, int32_t dim,
                                                      hua::Phase phase, int32_t round,
                                                      int32_t pass) = 0;
  virtual absl::Status EndJob(const std::string& job_id) = 0;
};

// Makes the link for a job's aggregator address (spec.hua.aggregator).
using AggregatorLinkFactory =
    std::function<absl::StatusOr<std::unique_ptr<AggregatorLink>>(const std::string& address)>;

struct HuaRunnerOptions {
  absl::Duration poll = absl::Seconds(2);  // long-poll length for hosts
  absl::Duration liveness = absl::Seconds(10);
  absl::Duration tick = absl::Milliseconds(20);  // how often deadlines are checked
  absl::Duration aggregator_retry = absl::Seconds(1);
  const Clock* clock = nullptr;  // protocol time (server/clock.h); null = the real clock
};

// The Hua S3 runner (server/job_runner.h).
class HuaRunner final : public JobRunner {
 public:
  HuaRunner(HuaRunnerOptions options, AggregatorLinkFactory links);
  ~HuaRunner() override;

  std::string_view kind() const override { return "hua-s3"; }
  bool Takes(v1::Setting setting) const override { return setting == v1::SETTING_HUA_S3; }

  absl::Status Start() override;
  void Stop() override;

  // ---- operators
  absl::StatusOr<std::string> SubmitJob(const v1::JobSpec& spec,
                                        const std::string& submitter = "") override;
  // Every Hua S3 job of this run, in id order.
  absl::StatusOr<std::vector<std::string>> JobIds() override;
  // NotFound if the id is no Hua job of this run.
  absl::StatusOr<v1::JobStatus> GetJob(const std::string& job_id) override;

  // ---- device hosts (authenticated `host`)
  v1::HuaJobOffer Offer(const std::string& host);
  absl::StatusOr<int32_t> Register(const std::string& host, const std::string& job_id,
                                   const std::vector<hua::UserHello>& users);
  // Long poll: waits up to options.poll for work for `host`.
  absl::StatusOr<v1::HuaTasks> Poll(const std::string& host, const std::string& job_id);
  absl::Status Done(const std::string& host, const v1::HuaDoneRequest& req);
  absl::StatusOr<v1::HuaFinalItems> FinalItems(const std::string& host, const std::string& job_id);
  absl::Status ReportResult(const std::string& host, const v1::HuaResultReport& report);

 private:
  struct Entry {
    v1::JobSpec spec;
    std::unique_ptr<HuaS3Job> job;
    std::unique_ptr<AggregatorLink> link;
  };

  // One action of the active job at `now`; false when there was nothing to
  // do. Run by loop_. Calls the aggregator with mu_ released, and holds it
  // again when it returns or throws.
  bool StepLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Entry* ActiveLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Entry*> FindLocked(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  HuaRunnerOptions options_;
  AggregatorLinkFactory links_;
  absl::Mutex mu_;
  // Steps the active job every options.tick and holds the hosts' long polls;
  // Notify()d on every state change the loop or a poll waits for.
  LifecycleLoop loop_;
  std::map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);  // front = the active job
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_HUA_HUA_RUNNER_H_
