#include "tests/integration/hostile_server.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/net/credentials.h"

namespace fedmf::it {
namespace {

using net::ToGrpc;

// The caller's name from its verified certificate (the double trusts the CA
// as the real server does; it does not check roles, the clients do).
absl::StatusOr<std::string> Caller(const grpc::ServerContext& ctx) {
  ASSIGN_OR_RETURN(auto id, net::PeerIdentityOf(ctx));
  return id.name;
}

std::chrono::system_clock::time_point Deadline(absl::Duration d) {
  return std::chrono::system_clock::now() + absl::ToChronoMilliseconds(d);
}

template <typename T, typename Key>
std::vector<T> Filter(const std::vector<T>& all, const std::string& job_id, Key key) {
  std::vector<T> out;
  for (const T& x : all) {
    if (key(x) == job_id) out.push_back(x);
  }
  return out;
}

grpc::Status ServeMatrix(const mf::Matrix& m, const std::string& job_id, int32_t round,
                         int32_t max_chunk_values, grpc::ServerWriter<v1::MatrixChunk>* writer) {
  for (const v1::MatrixChunk& chunk : net::EncodeMatrix(m, job_id, round, max_chunk_values)) {
    if (!writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
  }
  return grpc::Status::OK;
}

}  // namespace

// ---------------------------------------------------------------- Coordinator

class HostileServer::CoordinatorImpl final : public v1::Coordinator::Service {
 public:
  explicit CoordinatorImpl(HostileServer* s) : s_(s) {}

  grpc::Status Register(grpc::ServerContext* ctx, const v1::RegisterRequest*,
                        v1::RegisterResponse* resp) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    resp->set_server_version("hostile-double");
    resp->set_max_chunk_values(s_->options_.max_chunk_values);
    resp->set_poll_seconds(absl::ToDoubleSeconds(s_->options_.poll));
    resp->set_liveness_seconds(s_->options_.liveness_seconds);
    return grpc::Status::OK;
  }

  grpc::Status GetTask(grpc::ServerContext* ctx, const v1::GetTaskRequest*,
                       v1::Task* resp) override {
    auto who = Caller(*ctx);
    if (!who.ok()) return ToGrpc(who.status());
    std::optional<v1::Task> task = s_->NextTask(s_->tasks_, *who, ctx);
    if (task.has_value()) {
      *resp = std::move(*task);
    } else {
      resp->set_kind(v1::TASK_KIND_IDLE);
    }
    return grpc::Status::OK;
  }

  grpc::Status ReplyOffer(grpc::ServerContext* ctx, const v1::OfferReply* req, v1::Ack*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    std::lock_guard lock(s_->mu_);
    s_->offer_replies_.push_back(*req);
    s_->cv_.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status DownloadShared(grpc::ServerContext* ctx, const v1::DownloadRequest* req,
                              grpc::ServerWriter<v1::MatrixChunk>* writer) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    mf::Matrix m;
    {
      std::lock_guard lock(s_->mu_);
      s_->downloads_.push_back(*req);
      s_->cv_.notify_all();
      auto it = s_->shared_.find({req->job_id(), req->round()});
      if (it == s_->shared_.end()) {
        return grpc::Status(grpc::StatusCode::NOT_FOUND,
                            absl::StrCat("no shared matrix scripted for job '", req->job_id(),
                                         "' round ", req->round()));
      }
      m = it->second;
    }
    return ServeMatrix(m, req->job_id(), req->round(), s_->options_.max_chunk_values, writer);
  }

  grpc::Status UploadUpdate(grpc::ServerContext* ctx, grpc::ServerReader<v1::MatrixChunk>* reader,
                            v1::UploadResponse* resp) override {
    auto who = Caller(*ctx);
    if (!who.ok()) return ToGrpc(who.status());
    v1::MatrixChunk chunk;
    if (!reader->Read(&chunk) || !chunk.has_header()) {
      return ToGrpc(absl::InvalidArgumentError("the first chunk must be the header"));
    }
    RecordedUpload up;
    up.client = *who;
    up.header = chunk.header();
    net::MatrixAssembler assembler(up.header.job_id(), up.header.round(), -1, -1,
                                   s_->options_.max_chunk_values);
    if (auto s = assembler.Add(chunk); !s.ok()) return ToGrpc(s);
    while (reader->Read(&chunk)) {
      if (auto s = assembler.Add(chunk); !s.ok()) return ToGrpc(s);
    }
    auto m = assembler.Finish();
    if (!m.ok()) return ToGrpc(m.status());
    up.matrix = std::move(*m);
    resp->set_round(up.header.round());
    resp->set_accepted(true);
    std::lock_guard lock(s_->mu_);
    s_->uploads_.push_back(std::move(up));
    s_->cv_.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status ReportPrivacy(grpc::ServerContext* ctx, const v1::PrivacyReport* req,
                             v1::Ack*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    std::lock_guard lock(s_->mu_);
    s_->reports_.push_back(*req);
    s_->cv_.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest*, v1::Ack*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    return grpc::Status::OK;
  }

 private:
  HostileServer* s_;
};

// ---------------------------------------------------------------- DeviceCoordinator

class HostileServer::DeviceImpl final : public v1::DeviceCoordinator::Service {
 public:
  explicit DeviceImpl(HostileServer* s) : s_(s) {}

  grpc::Status GetDeviceTask(grpc::ServerContext* ctx, const v1::HostHello*,
                             v1::DeviceTask* resp) override {
    auto who = Caller(*ctx);
    if (!who.ok()) return ToGrpc(who.status());
    std::optional<v1::DeviceTask> task = s_->NextTask(s_->device_tasks_, *who, ctx);
    if (task.has_value()) {
      *resp = std::move(*task);
    } else {
      resp->set_kind(v1::DEVICE_TASK_KIND_IDLE);
    }
    return grpc::Status::OK;
  }

  grpc::Status DownloadModel(grpc::ServerContext* ctx, const v1::ModelRequest* req,
                             grpc::ServerWriter<v1::MatrixChunk>* writer) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    mf::Matrix m;
    {
      std::lock_guard lock(s_->mu_);
      s_->model_downloads_.push_back(*req);
      s_->cv_.notify_all();
      auto it = s_->models_.find({req->job_id(), req->iteration()});
      if (it == s_->models_.end()) {
        return grpc::Status(grpc::StatusCode::NOT_FOUND, "no model scripted");
      }
      m = it->second;
    }
    return ServeMatrix(m, req->job_id(), req->iteration(), s_->options_.max_chunk_values, writer);
  }

  grpc::Status FetchInbox(grpc::ServerContext* ctx, const v1::BatchHeader* req,
                          grpc::ServerWriter<v1::InboxBatch>* writer) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    InboxScript script;
    std::vector<v1::DeviceBatch> submitted;
    {
      std::lock_guard lock(s_->mu_);
      script = s_->inbox_script_;
      submitted = s_->device_batches_;
    }
    if (!script) return grpc::Status::OK;
    for (const v1::InboxBatch& b : script(*req, submitted)) {
      if (!writer->Write(b)) return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
    }
    return grpc::Status::OK;
  }

  grpc::Status Submit(grpc::ServerContext* ctx, grpc::ServerReader<v1::DeviceBatch>* reader,
                      v1::SubmitResponse* resp) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    v1::DeviceBatch batch;
    int32_t accepted = 0;
    while (reader->Read(&batch)) {
      accepted += batch.messages_size();
      std::lock_guard lock(s_->mu_);
      s_->device_batches_.push_back(batch);
      s_->cv_.notify_all();
    }
    resp->set_accepted(accepted);
    return grpc::Status::OK;
  }

  grpc::Status ReportMetrics(grpc::ServerContext* ctx, const v1::DeviceMetricsReport* req,
                             v1::Ack*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    std::lock_guard lock(s_->mu_);
    s_->device_reports_.push_back(*req);
    s_->cv_.notify_all();
    return grpc::Status::OK;
  }

 private:
  HostileServer* s_;
};

// ---------------------------------------------------------------- HuaRecommender

class HostileServer::HuaImpl final : public v1::HuaRecommender::Service {
 public:
  explicit HuaImpl(HostileServer* s) : s_(s) {}

  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::HuaJobQuery*,
                      v1::HuaJobOffer* resp) override {
    auto who = Caller(*ctx);
    if (!who.ok()) return ToGrpc(who.status());
    std::lock_guard lock(s_->mu_);
    ++s_->hua_queries_[*who];
    s_->cv_.notify_all();
    if (s_->hua_offer_.has_value()) {
      resp->set_active(true);
      *resp->mutable_spec() = *s_->hua_offer_;
      resp->set_poll_seconds(absl::ToDoubleSeconds(s_->options_.poll));
    }
    return grpc::Status::OK;
  }

  grpc::Status Register(grpc::ServerContext* ctx, const v1::HuaRegisterRequest* req,
                        v1::HuaRegisterResponse* resp) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    std::lock_guard lock(s_->mu_);
    s_->hua_registrations_.push_back(*req);
    s_->cv_.notify_all();
    resp->set_registered(req->users_size());
    return grpc::Status::OK;
  }

  grpc::Status Poll(grpc::ServerContext* ctx, const v1::HuaPollRequest* req,
                    v1::HuaTasks* resp) override {
    auto who = Caller(*ctx);
    if (!who.ok()) return ToGrpc(who.status());
    Count(req->job_id());
    std::unique_lock lock(s_->mu_);
    ++s_->hua_polls_after_[*who];
    s_->cv_.notify_all();
    std::deque<v1::HuaTasks>& queue = s_->hua_tasks_[*who];
    s_->WaitLocked(lock, s_->options_.poll, [&] { return s_->shutting_down_ || !queue.empty(); });
    if (!queue.empty()) {
      *resp = std::move(queue.front());
      queue.pop_front();
      s_->hua_polls_after_[*who] = 0;
      return grpc::Status::OK;
    }
    resp->set_kind(v1::HUA_TASK_KIND_IDLE);
    resp->set_job_id(req->job_id());
    return grpc::Status::OK;
  }

  grpc::Status Done(grpc::ServerContext* ctx, const v1::HuaDoneRequest* req, v1::HuaAck*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    Count(req->job_id());
    return grpc::Status::OK;
  }

  grpc::Status FinalItems(grpc::ServerContext* ctx, const v1::HuaFinalItemsRequest* req,
                          v1::HuaFinalItems*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    Count(req->job_id());
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "not scripted");
  }

  grpc::Status ReportResult(grpc::ServerContext* ctx, const v1::HuaResultReport* req,
                            v1::HuaAck*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    Count(req->job_id());
    return grpc::Status::OK;
  }

 private:
  void Count(const std::string& job_id) {
    std::lock_guard lock(s_->mu_);
    ++s_->hua_calls_[job_id];
    s_->cv_.notify_all();
  }
  HostileServer* s_;
};

// ---------------------------------------------------------------- HostileServer

HostileServer::HostileServer(HostileServerOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<HostileServer>> HostileServer::Start(HostileServerOptions options) {
  std::unique_ptr<HostileServer> s(new HostileServer(std::move(options)));
  ASSIGN_OR_RETURN(auto creds,
                   net::MakeServerCredentials({false, s->options_.cert_dir, s->options_.name}));
  s->coordinator_ = std::make_unique<CoordinatorImpl>(s.get());
  s->device_ = std::make_unique<DeviceImpl>(s.get());
  s->hua_ = std::make_unique<HuaImpl>(s.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", creds, &s->port_);
  builder.RegisterService(s->coordinator_.get());
  builder.RegisterService(s->device_.get());
  builder.RegisterService(s->hua_.get());
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError("the hostile server could not bind a loopback port");
  }
  return s;
}

HostileServer::~HostileServer() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
    cv_.notify_all();
  }
  if (server_ != nullptr) server_->Shutdown(Deadline(absl::Seconds(2)));
}

std::string HostileServer::address() const { return absl::StrCat("127.0.0.1:", port_); }

template <typename Pred>
bool HostileServer::WaitLocked(std::unique_lock<std::mutex>& lock, absl::Duration timeout,
                               Pred pred) {
  return cv_.wait_until(lock, Deadline(timeout), pred);
}

template <typename Task>
std::optional<Task> HostileServer::NextTask(std::map<std::string, Queue<Task>>& queues,
                                            const std::string& client, grpc::ServerContext* ctx) {
  std::unique_lock lock(mu_);
  Queue<Task>& q = queues[client];
  const int64_t poll = q.polls++;
  cv_.notify_all();  // WaitHandled watches the poll count
  WaitLocked(lock, options_.poll,
             [&] { return shutting_down_ || ctx->IsCancelled() || !q.pending.empty(); });
  // The poll of a client that died meanwhile (a test killed it) must not take
  // the task scripted for its restarted process: that task would be lost.
  if (q.pending.empty() || shutting_down_ || ctx->IsCancelled()) return std::nullopt;
  Task t = std::move(q.pending.front());
  q.pending.pop_front();
  q.last_delivery_poll = poll;
  return t;
}

void HostileServer::PushTask(const std::string& party, v1::Task task) {
  std::lock_guard lock(mu_);
  tasks_[party].pending.push_back(std::move(task));
  cv_.notify_all();
}

void HostileServer::SetShared(const std::string& job_id, int32_t round, mf::Matrix m) {
  std::lock_guard lock(mu_);
  shared_[{job_id, round}] = std::move(m);
}

void HostileServer::PushDeviceTask(const std::string& host, v1::DeviceTask task) {
  std::lock_guard lock(mu_);
  device_tasks_[host].pending.push_back(std::move(task));
  cv_.notify_all();
}

void HostileServer::SetModel(const std::string& job_id, int32_t iteration, mf::Matrix m) {
  std::lock_guard lock(mu_);
  models_[{job_id, iteration}] = std::move(m);
}

void HostileServer::SetInboxScript(InboxScript script) {
  std::lock_guard lock(mu_);
  inbox_script_ = std::move(script);
}

void HostileServer::PushHuaTasks(const std::string& host, v1::HuaTasks tasks) {
  std::lock_guard lock(mu_);
  hua_tasks_[host].push_back(std::move(tasks));
  hua_polls_after_[host] = 0;
  cv_.notify_all();
}

absl::Status HostileServer::WaitHuaHandled(const std::string& host, absl::Duration timeout) {
  std::unique_lock lock(mu_);
  // A poll after the queue emptied: the last task was answered (the host
  // polls again only after it dealt with a task).
  if (!WaitLocked(lock, timeout,
                  [&] { return hua_tasks_[host].empty() && hua_polls_after_[host] >= 1; })) {
    return absl::DeadlineExceededError(absl::StrCat("'", host, "' did not handle its Hua tasks"));
  }
  return absl::OkStatus();
}

void HostileServer::OfferHuaJob(std::optional<v1::JobSpec> spec) {
  std::lock_guard lock(mu_);
  hua_offer_ = std::move(spec);
  hua_queries_.clear();
}

absl::StatusOr<v1::OfferReply> HostileServer::WaitOfferReply(const std::string& party,
                                                             const std::string& job_id,
                                                             absl::Duration timeout) {
  std::unique_lock lock(mu_);
  std::optional<v1::OfferReply> found;
  WaitLocked(lock, timeout, [&] {
    for (const v1::OfferReply& r : offer_replies_) {
      if (r.party() == party && r.job_id() == job_id) {
        found = r;
        return true;
      }
    }
    return false;
  });
  if (!found.has_value()) {
    return absl::DeadlineExceededError(
        absl::StrCat("no offer reply from '", party, "' for job '", job_id, "'"));
  }
  return *found;
}

absl::StatusOr<RecordedUpload> HostileServer::WaitUpload(const std::string& party,
                                                         const std::string& job_id, int32_t round,
                                                         absl::Duration timeout) {
  std::unique_lock lock(mu_);
  std::optional<RecordedUpload> found;
  WaitLocked(lock, timeout, [&] {
    for (const RecordedUpload& u : uploads_) {
      if (u.client == party && u.header.job_id() == job_id && u.header.round() == round) {
        found = u;
        return true;
      }
    }
    return false;
  });
  if (!found.has_value()) {
    return absl::DeadlineExceededError(
        absl::StrCat("no upload from '", party, "' for job '", job_id, "' round ", round));
  }
  return *found;
}

absl::StatusOr<v1::PrivacyReport> HostileServer::WaitFinalReport(const std::string& party,
                                                                 const std::string& job_id,
                                                                 absl::Duration timeout) {
  std::unique_lock lock(mu_);
  std::optional<v1::PrivacyReport> found;
  WaitLocked(lock, timeout, [&] {
    for (const v1::PrivacyReport& r : reports_) {
      if (r.party() == party && r.job_id() == job_id && r.finished()) {
        found = r;
        return true;
      }
    }
    return false;
  });
  if (!found.has_value()) {
    return absl::DeadlineExceededError(
        absl::StrCat("no final privacy report from '", party, "' for job '", job_id, "'"));
  }
  return *found;
}

absl::Status HostileServer::WaitHandled(const std::string& client, absl::Duration timeout) {
  std::unique_lock lock(mu_);
  auto handled = [&](const auto& queues) {
    auto it = queues.find(client);
    if (it == queues.end()) return false;
    const auto& q = it->second;
    return q.pending.empty() && q.last_delivery_poll >= 0 && q.polls > q.last_delivery_poll + 1;
  };
  if (!WaitLocked(lock, timeout, [&] { return handled(tasks_) || handled(device_tasks_); })) {
    return absl::DeadlineExceededError(
        absl::StrCat("'", client, "' did not poll again after its scripted tasks"));
  }
  return absl::OkStatus();
}

absl::Status HostileServer::WaitHuaQueries(const std::string& host, int n, absl::Duration timeout) {
  std::unique_lock lock(mu_);
  if (!WaitLocked(lock, timeout, [&] {
        auto it = hua_queries_.find(host);
        return it != hua_queries_.end() && it->second >= n;
      })) {
    return absl::DeadlineExceededError(
        absl::StrCat("'", host, "' did not ask for a Hua job ", n, " times"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::HuaRegisterRequest> HostileServer::WaitHuaRegistration(const std::string& job_id,
                                                                          absl::Duration timeout) {
  std::unique_lock lock(mu_);
  std::optional<v1::HuaRegisterRequest> found;
  WaitLocked(lock, timeout, [&] {
    for (const v1::HuaRegisterRequest& r : hua_registrations_) {
      if (r.job_id() == job_id) {
        found = r;
        return true;
      }
    }
    return false;
  });
  if (!found.has_value()) {
    return absl::DeadlineExceededError(absl::StrCat("no Hua registration for job '", job_id, "'"));
  }
  return *found;
}

absl::StatusOr<v1::DeviceMetricsReport> HostileServer::WaitDeviceReport(const std::string& job_id,
                                                                        int32_t stage,
                                                                        absl::Duration timeout) {
  std::unique_lock lock(mu_);
  std::optional<v1::DeviceMetricsReport> found;
  WaitLocked(lock, timeout, [&] {
    for (const v1::DeviceMetricsReport& r : device_reports_) {
      if (r.job_id() == job_id && r.stage() == stage) {
        found = r;
        return true;
      }
    }
    return false;
  });
  if (!found.has_value()) {
    return absl::DeadlineExceededError(
        absl::StrCat("no stage-", stage, " device report for job '", job_id, "'"));
  }
  return *found;
}

std::vector<v1::DownloadRequest> HostileServer::Downloads(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return Filter(downloads_, job_id, [](const v1::DownloadRequest& r) { return r.job_id(); });
}

void HostileServer::ForgetJob(const std::string& job_id) {
  std::lock_guard lock(mu_);
  std::erase_if(offer_replies_, [&](const v1::OfferReply& r) { return r.job_id() == job_id; });
  std::erase_if(downloads_, [&](const v1::DownloadRequest& d) { return d.job_id() == job_id; });
  std::erase_if(uploads_, [&](const RecordedUpload& u) { return u.header.job_id() == job_id; });
  std::erase_if(reports_, [&](const v1::PrivacyReport& r) { return r.job_id() == job_id; });
}

std::vector<RecordedUpload> HostileServer::Uploads(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return Filter(uploads_, job_id, [](const RecordedUpload& u) { return u.header.job_id(); });
}

std::vector<v1::PrivacyReport> HostileServer::Reports(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return Filter(reports_, job_id, [](const v1::PrivacyReport& r) { return r.job_id(); });
}

std::vector<v1::ModelRequest> HostileServer::ModelDownloads(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return Filter(model_downloads_, job_id, [](const v1::ModelRequest& r) { return r.job_id(); });
}

std::vector<v1::DeviceBatch> HostileServer::DeviceBatches(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return Filter(device_batches_, job_id,
                [](const v1::DeviceBatch& b) { return b.header().job_id(); });
}

std::vector<v1::DeviceMetricsReport> HostileServer::DeviceReports(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return Filter(device_reports_, job_id,
                [](const v1::DeviceMetricsReport& r) { return r.job_id(); });
}

std::vector<v1::HuaRegisterRequest> HostileServer::HuaRegistrations(
    const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return Filter(hua_registrations_, job_id,
                [](const v1::HuaRegisterRequest& r) { return r.job_id(); });
}

int64_t HostileServer::HuaCalls(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  auto it = hua_calls_.find(job_id);
  return it == hua_calls_.end() ? 0 : it->second;
}

// ---------------------------------------------------------------- HostileAggregator

class HostileAggregator::Impl final : public v1::HuaAggregator::Service {
 public:
  grpc::Status Submit(grpc::ServerContext* ctx, const v1::HuaReportBatch* req,
                      v1::HuaSubmitResponse*) override {
    if (auto who = Caller(*ctx); !who.ok()) return ToGrpc(who.status());
    std::lock_guard lock(mu);
    submitted.push_back(*req);
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no round open (hostile double)");
  }
  mutable std::mutex mu;
  std::vector<v1::HuaReportBatch> submitted;
};

HostileAggregator::HostileAggregator() = default;

absl::StatusOr<std::unique_ptr<HostileAggregator>> HostileAggregator::Start(
    const std::string& cert_dir, const std::string& name) {
  std::unique_ptr<HostileAggregator> a(new HostileAggregator());
  ASSIGN_OR_RETURN(auto creds, net::MakeServerCredentials({false, cert_dir, name}));
  a->impl_ = std::make_unique<Impl>();
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", creds, &a->port_);
  builder.RegisterService(a->impl_.get());
  a->server_ = builder.BuildAndStart();
  if (a->server_ == nullptr || a->port_ == 0) {
    return absl::UnavailableError("the hostile aggregator could not bind a loopback port");
  }
  return a;
}

HostileAggregator::~HostileAggregator() {
  if (server_ != nullptr) server_->Shutdown(Deadline(absl::Seconds(2)));
}

std::string HostileAggregator::address() const { return absl::StrCat("127.0.0.1:", port_); }

std::vector<v1::HuaReportBatch> HostileAggregator::Submitted() const {
  std::lock_guard lock(impl_->mu);
  return impl_->submitted;
}

}  // namespace fedmf::it
