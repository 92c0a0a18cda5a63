// A hostile fedmf.v1 server for the integration tests: it speaks the wire
// protocol the real daemons dial (Coordinator for fedmf-party,
// DeviceCoordinator and HuaRecommender for fedmf-device), over mTLS with a
// server-role certificate of the test CA, but sends exactly what a test
// scripts: job specs with a seed, a foreign rating range or epsilon = inf,
// tasks in any order (a ROUND without an OFFER), shared matrices with a row
// of 1e6, inbox messages of its choosing. It records everything the clients
// send (offer replies, downloads, uploaded matrices, privacy reports, device
// batches, Hua registrations) and lets the test wait for those events on a
// condition variable, never on a sleep.
//
// "Handled": the daemons run one task at a time and poll again only when the
// task is done (accepted, released, or refused), so a client's first poll
// after its last scripted task was delivered marks that task as handled.
//
// HostileAggregator plays fedmf-aggregator (Hua S3's third party) the same
// way: it records every report a device host submits to it.
#ifndef FEDMF_TESTS_INTEGRATION_HOSTILE_SERVER_H_
#define FEDMF_TESTS_INTEGRATION_HOSTILE_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/mf/embeddings.h"
#include "fedmf/v1/device.grpc.pb.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "fedmf/v1/hua.grpc.pb.h"

namespace fedmf::it {

// The device hosts' data in both hostile-server test files, and how long a
// test waits for an event the daemons should produce.
inline constexpr char kDeviceData[] = "synthetic:users=30,items=20,density=0.2,seed=5";
inline constexpr absl::Duration kWait = absl::Seconds(60);

struct HostileServerOptions {
  std::string cert_dir;         // the test CA's directory (LocalCluster::cert_dir())
  std::string name = "server";  // certificate name; must hold the server role
  // A poll with nothing scripted returns IDLE after this long.
  absl::Duration poll = absl::Milliseconds(200);
  double liveness_seconds = 30;  // RegisterResponse.liveness_seconds
  int32_t max_chunk_values = 1 << 16;
};

// One matrix a client uploaded, as the server received it.
struct RecordedUpload {
  std::string client;  // from the peer's certificate
  v1::MatrixHeader header;
  mf::Matrix matrix;
};

class HostileServer {
 public:
  static absl::StatusOr<std::unique_ptr<HostileServer>> Start(HostileServerOptions options);
  ~HostileServer();

  std::string address() const;  // 127.0.0.1:<port>

  // ------------------------------------------------ scripting
  // Cross-silo (Coordinator): tasks `party` gets from GetTask, in order.
  void PushTask(const std::string& party, v1::Task task);
  // What DownloadShared serves for (job, round) to every party.
  void SetShared(const std::string& job_id, int32_t round, mf::Matrix m);
  // LFL (DeviceCoordinator): tasks `host` gets from GetDeviceTask, in order.
  void PushDeviceTask(const std::string& host, v1::DeviceTask task);
  // What DownloadModel serves for (job, iteration).
  void SetModel(const std::string& job_id, int32_t iteration, mf::Matrix m);
  // What FetchInbox answers; the script sees the batch header and every
  // batch submitted so far (substituted keys, equivocated survivor sets).
  using InboxScript = std::function<std::vector<v1::InboxBatch>(
      const v1::BatchHeader& header, const std::vector<v1::DeviceBatch>& submitted)>;
  void SetInboxScript(InboxScript script);
  // Hua S3 (HuaRecommender): the job GetJob offers (nullopt: none).
  void OfferHuaJob(std::optional<v1::JobSpec> spec);
  // What the Hua host's next Polls return, in order (then IDLE).
  void PushHuaTasks(const std::string& host, v1::HuaTasks tasks);
  // Every pushed Hua task of `host` was delivered and it polled again after.
  absl::Status WaitHuaHandled(const std::string& host, absl::Duration timeout);

  // ------------------------------------------------ waits (false/error on timeout)
  absl::StatusOr<v1::OfferReply> WaitOfferReply(const std::string& party, const std::string& job_id,
                                                absl::Duration timeout);
  absl::StatusOr<RecordedUpload> WaitUpload(const std::string& party, const std::string& job_id,
                                            int32_t round, absl::Duration timeout);
  absl::StatusOr<v1::PrivacyReport> WaitFinalReport(const std::string& party,
                                                    const std::string& job_id,
                                                    absl::Duration timeout);
  // Every task scripted for `client` (party or LFL host) was delivered and
  // the client polled again afterwards: it has handled them all.
  absl::Status WaitHandled(const std::string& client, absl::Duration timeout);
  // The Hua host asked for a job at least `n` times after OfferHuaJob.
  absl::Status WaitHuaQueries(const std::string& host, int n, absl::Duration timeout);
  absl::StatusOr<v1::HuaRegisterRequest> WaitHuaRegistration(const std::string& job_id,
                                                             absl::Duration timeout);
  absl::StatusOr<v1::DeviceMetricsReport> WaitDeviceReport(const std::string& job_id, int32_t stage,
                                                           absl::Duration timeout);

  // ------------------------------------------------ records
  // Drops every record of `job_id` (offer replies, downloads, uploads,
  // reports), so a test can offer the same job id again and wait for the new
  // answers (a party started afresh, or one that must refuse a reused id).
  void ForgetJob(const std::string& job_id);
  std::vector<v1::DownloadRequest> Downloads(const std::string& job_id) const;
  std::vector<RecordedUpload> Uploads(const std::string& job_id) const;
  std::vector<v1::PrivacyReport> Reports(const std::string& job_id) const;
  std::vector<v1::ModelRequest> ModelDownloads(const std::string& job_id) const;
  std::vector<v1::DeviceBatch> DeviceBatches(const std::string& job_id) const;
  std::vector<v1::DeviceMetricsReport> DeviceReports(const std::string& job_id) const;
  std::vector<v1::HuaRegisterRequest> HuaRegistrations(const std::string& job_id) const;
  int64_t HuaCalls(const std::string& job_id) const;  // Poll/Done/FinalItems/ReportResult

 private:
  class CoordinatorImpl;
  class DeviceImpl;
  class HuaImpl;
  friend class CoordinatorImpl;
  friend class DeviceImpl;
  friend class HuaImpl;

  // Per polling client: its scripted queue and where delivery stands.
  template <typename Task>
  struct Queue {
    std::deque<Task> pending;
    int64_t polls = 0;                // polls received
    int64_t last_delivery_poll = -1;  // the poll that took the last task
  };

  explicit HostileServer(HostileServerOptions options);
  // Takes the next task for `client` (waiting up to options_.poll), or nullopt.
  template <typename Task>
  std::optional<Task> NextTask(std::map<std::string, Queue<Task>>& queues,
                               const std::string& client, grpc::ServerContext* ctx);
  template <typename Pred>
  bool WaitLocked(std::unique_lock<std::mutex>& lock, absl::Duration timeout, Pred pred);
  void Notify();

  HostileServerOptions options_;
  int port_ = 0;
  std::unique_ptr<CoordinatorImpl> coordinator_;
  std::unique_ptr<DeviceImpl> device_;
  std::unique_ptr<HuaImpl> hua_;
  std::unique_ptr<grpc::Server> server_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool shutting_down_ = false;
  std::map<std::string, Queue<v1::Task>> tasks_;
  std::map<std::string, Queue<v1::DeviceTask>> device_tasks_;
  std::map<std::pair<std::string, int32_t>, mf::Matrix> shared_;
  std::map<std::pair<std::string, int32_t>, mf::Matrix> models_;
  InboxScript inbox_script_;
  std::optional<v1::JobSpec> hua_offer_;
  std::map<std::string, int64_t> hua_queries_;  // host -> GetJob calls since OfferHuaJob

  std::vector<v1::OfferReply> offer_replies_;
  std::vector<v1::DownloadRequest> downloads_;
  std::vector<RecordedUpload> uploads_;
  std::vector<v1::PrivacyReport> reports_;
  std::vector<v1::ModelRequest> model_downloads_;
  std::vector<v1::DeviceBatch> device_batches_;
  std::vector<v1::DeviceMetricsReport> device_reports_;
  std::vector<v1::HuaRegisterRequest> hua_registrations_;
  std::map<std::string, int64_t> hua_calls_;
  std::map<std::string, std::deque<v1::HuaTasks>> hua_tasks_;  // host -> scripted polls
  std::map<std::string, int64_t> hua_polls_after_;             // polls since its queue emptied
};

// fedmf-aggregator's part (HuaAggregator.Submit), recording every report.
class HostileAggregator {
 public:
  // `name`: a certificate of the aggregator role in `cert_dir`.
  static absl::StatusOr<std::unique_ptr<HostileAggregator>> Start(const std::string& cert_dir,
                                                                  const std::string& name);
  ~HostileAggregator();
  std::string address() const;
  std::vector<v1::HuaReportBatch> Submitted() const;

 private:
  class Impl;
  HostileAggregator();
  int port_ = 0;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace fedmf::it

#endif  // FEDMF_TESTS_INTEGRATION_HOSTILE_SERVER_H_
