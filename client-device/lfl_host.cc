#include "client-device/lfl_host.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/data/loaders.h"
#include "common/data/partition.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "common/log/log.h"
#include "common/net/client_context.h"
#include "common/net/reconnect.h"
#include "common/net/stop_canceller.h"
#include "common/net/tls_diagnosis.h"
#include "common/pki/tls_files.h"
#include "fedmf/v1/device.grpc.pb.h"

namespace fedmf::device {
namespace {

// Chunks of matrices the host accepts (the server sends <= its limit).
constexpr int32_t kMaxChunkValues = 1 << 20;
// Server messages answered per step of the masked-input phase, so only that
// many input vectors are alive at once.
constexpr size_t kAnswerChunk = 16;

class Host {
 public:
  Host(const LflHostOptions& options, const std::atomic<bool>& stop) : o_(options), stop_(stop) {}

  absl::Status Run() {
    if (o_.count < 1 || o_.first < 0) {
      return absl::InvalidArgumentError("--first must be >= 0 and --count >= 1");
    }
    RETURN_IF_ERROR(ValidateDevicePolicy(o_.policy));
    data::LoadOptions load;
    if (o_.rating_range.has_value()) load.range = *o_.rating_range;
    absl::StatusOr<data::Dataset> ds = data::LoadDataSpec(o_.devices_from, load);
    if (!ds.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices-from '", o_.devices_from, "': ", ds.status().message()));
    }
    if (o_.rating_range.has_value() &&
        !RatingRangeRefusal(*o_.rating_range, ds->range.min, ds->range.max).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--rating-range ", o_.rating_range->min, ",", o_.rating_range->max, ": --devices-from '",
          o_.devices_from, "' declares [", ds->range.min, ", ", ds->range.max,
          "] (synthetic data declares its own range: pass min=/max= there, or drop the flag)"));
    }
    own_range_ = ds->range;
    if (o_.first + o_.count > ds->num_users) {
      return absl::InvalidArgumentError(absl::StrCat("--first ", o_.first, " --count ", o_.count,
                                                     ": the data has only ", ds->num_users,
                                                     " users"));
    }
    dataset_ = *std::move(ds);
    if (!o_.tls.insecure) {
      // The host certifies its devices' secure-aggregation keys with its own
      // device certificate (secagg_keys.h, docs/security.md).
      ASSIGN_OR_RETURN(pki::TlsFiles files, pki::LoadTlsFiles(o_.tls.cert_dir, o_.tls.name));
      ASSIGN_OR_RETURN(HostKeyAuthority authority, HostKeyAuthority::Create(std::move(files)));
      key_authority_.emplace(std::move(authority));
    } else if (o_.policy.require_active_secagg) {
      spdlog::warn(
          "--insecure: no device certificate to certify secure-aggregation keys; with "
          "require_active_secagg every LFL job will be refused");
    }
    absl::StatusOr<std::unique_ptr<DeviceLedger>> ledger = DeviceLedger::Open(
        o_.ledger_path, {o_.policy.max_epsilon, o_.policy.delta, o_.policy.allow_non_private});
    if (!ledger.ok()) return ledger.status();
    ledger_ = *std::move(ledger);
    absl::StatusOr<std::shared_ptr<grpc::Channel>> ch = net::MakeChannel(
        o_.server, o_.tls, net::ExpectedPeer{o_.server_cert_name, pki::Role::kServer});
    if (!ch.ok()) return ch.status();
    channel_ = *ch;
    stub_ = v1::DeviceCoordinator::NewStub(channel_);
    for (int64_t d = o_.first; d < o_.first + o_.count; ++d) hello_.add_devices(d);
    hello_.set_host(o_.host);
    spdlog::info(
        "device host '{}': devices {}..{} of {}, server {}; ratings in [{}, {}]; policy: "
        "max_epsilon {} per device at delta {}, max_iterations {}, non-private {}, "
        "metrics reports {}, active secure aggregation {}, n >= {}, omega <= {}",
        o_.host, o_.first, o_.first + o_.count - 1, o_.devices_from, o_.server, own_range_.min,
        own_range_.max, o_.policy.max_epsilon, o_.policy.delta, o_.policy.max_iterations,
        o_.policy.allow_non_private ? "allowed" : "refused",
        o_.policy.report_metrics ? "on" : "off",
        o_.policy.require_active_secagg ? "required" : "optional", o_.policy.min_devices,
        o_.policy.max_omega);

    double backoff = 0.5;
    net::TlsCauseOnce tls_cause(  // logs each cause once, not on every retry
        o_.server, o_.tls,
        net::ExpectedPeer{o_.server_cert_name, pki::Role::kServer, "--server-name"});
    net::StopCanceller canceller(&stop_);  // a stop ends the long poll at once
    while (!stop_) {
      v1::DeviceTask task;
      auto ctx = net::DeadlineContext(absl::Seconds(60));
      grpc::Status s;
      {
        net::StopCanceller::Scope cancel_on_stop(&canceller, ctx.get());
        s = stub_->GetDeviceTask(ctx.get(), hello_, &task);
      }
      if (stop_) break;
      if (!s.ok()) {
        spdlog::warn("server {}: {} (retrying in {:.1f}s)", o_.server, s.error_message(), backoff);
        if (const std::string cause = tls_cause.NewCause(net::FromGrpc(s)); !cause.empty()) {
          spdlog::error("server {}: cause: {}", o_.server, cause);
        }
        net::WaitBeforeRetry(*channel_, absl::Seconds(backoff), stop_);
        backoff = std::min(backoff * 2, o_.max_backoff_seconds);
        continue;
      }
      backoff = 0.5;
      absl::StatusOr<bool> done = Handle(task);
      if (!done.ok()) {
        spdlog::error("job '{}': {}", task.job_id(), done.status().message());
        Sleep(1);  // do not spin on a task this host cannot do
        continue;
      }
      if (*done && o_.exit_after_job) return absl::OkStatus();
    }
    return absl::CancelledError("stopped");
  }

 private:
  void Sleep(double seconds) {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // true when the job ended (finished or failed).
  absl::StatusOr<bool> Handle(const v1::DeviceTask& task) {
    if (!refused_job_.empty() && task.job_id() == refused_job_) {
      // A job this host refused: its devices take no part. The server sees
      // them silent and drops them; do not spin on its tasks.
      if (task.kind() == v1::DEVICE_TASK_KIND_ABORT || task.kind() == v1::DEVICE_TASK_KIND_FINISH) {
        refused_job_.clear();
        return true;
      }
      Sleep(1);
      return false;
    }
    switch (task.kind()) {
      case v1::DEVICE_TASK_KIND_ABORT:
        if (role_ != nullptr && job_id_ == task.job_id()) {
          spdlog::warn("job '{}' aborted: {}", task.job_id(), task.reason());
          role_.reset();
          return true;
        }
        return false;
      case v1::DEVICE_TASK_KIND_PRETRAIN: return Pretrain(task);
      case v1::DEVICE_TASK_KIND_PHASE: return Phase(task);
      case v1::DEVICE_TASK_KIND_FINISH: return Finish(task);
      default: return false;
    }
  }

  absl::StatusOr<mf::Matrix> Download(const std::string& job_id, int32_t iteration) {
    v1::ModelRequest req;
    req.set_host(o_.host);
    req.set_job_id(job_id);
    req.set_iteration(iteration);
    auto ctx = net::DeadlineContext(absl::Seconds(120));
    auto reader = stub_->DownloadModel(ctx.get(), req);
    net::MatrixAssembler assembler(job_id, iteration, job_.num_items, job_.config.dim,
                                   kMaxChunkValues);
    v1::MatrixChunk chunk;
    while (reader->Read(&chunk)) {
      RETURN_IF_ERROR(assembler.Add(chunk));
    }
    if (grpc::Status s = reader->Finish(); !s.ok()) return net::FromGrpc(s);
    return assembler.Finish();
  }

  // The end of Stage 1 / Stage 3 (the server waits for it). Its metrics are
  // computed on the devices' data without noise, so they are sent only when
  // the host's policy opts in (report_metrics); otherwise the report carries
  // only what the server already knows: the job, the stage and the number of
  // devices it selected on this host.
  absl::Status Report(int stage, const mf::ErrorMetrics& m) {
    v1::DeviceMetricsReport r;
    r.set_host(o_.host);
    r.set_job_id(job_id_);
    r.set_stage(stage);
    r.set_devices(static_cast<int32_t>(role_->size()));
    if (o_.policy.report_metrics) {
      r.set_test_mse(m.mse);
      r.set_test_count(m.count);
    }
    if (stage == 3 && o_.policy.report_metrics) {
      ASSIGN_OR_RETURN(double eps, role_->EpsilonSpent());
      r.set_epsilon_spent(eps);
    }
    v1::Ack ack;
    auto ctx = net::DeadlineContext(absl::Seconds(30));
    return net::FromGrpc(stub_->ReportMetrics(ctx.get(), r, &ack));
  }

  absl::StatusOr<bool> Pretrain(const v1::DeviceTask& task) {
    ASSIGN_OR_RETURN(net::LflJobConfig job, net::LflJobFromSpec(task.spec()));
    if (std::string why = Admission(job, task.num_devices()); !why.empty()) {
      spdlog::error("host '{}': REFUSED job '{}': {}; its devices take no part", o_.host,
                    task.job_id(), why);
      refused_job_ = task.job_id();
      return false;
    }
    job_ = std::move(job);
    job_id_ = task.job_id();
    // Server values the host has its own copy of are replaced by it before
    // the job reaches the role: R (clipping, sensitivity, codecs) and the
    // seed (none: the devices' randomness is the OS CSPRNG or --seed).
    job_.config.device.rating_max = own_range_.max;
    job_.config.seed.reset();
    // The held-out split is the host's own choice: --seed, else 1 (with
    // --seed equal to the job's, the same split as lfl::SimulateLfl).
    absl::StatusOr<data::Federation> fed =
        data::PartitionLfl(dataset_, {job_.config.test_fraction, o_.role.seed.value_or(1)});
    if (!fed.ok()) return fed.status();
    std::vector<std::pair<uint64_t, data::PartyData>> devices;
    for (uint64_t d : task.devices()) {
      if (d < static_cast<uint64_t>(o_.first) || d >= static_cast<uint64_t>(o_.first + o_.count)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the server assigned device ", d, ", which this host does not run"));
      }
      devices.emplace_back(d, std::move(fed->parties[d]));
    }
    LflRoleOptions role_options = o_.role;
    role_options.key_authority = key_authority_.has_value() ? &*key_authority_ : nullptr;
    role_options.require_active_secagg = o_.policy.require_active_secagg;
    absl::StatusOr<std::unique_ptr<LflRole>> role =
        LflRole::Create(role_options, job_, task.num_devices(), std::move(devices), ledger_.get());
    if (!role.ok()) return role.status();
    // The budget plan: all T releases of every device must fit its budget.
    if (std::string why = BudgetRefusal(**role); !why.empty()) {
      spdlog::error("host '{}': REFUSED job '{}': {}; its devices take no part", o_.host, job_id_,
                    why);
      refused_job_ = job_id_;
      return false;
    }
    role_ = *std::move(role);
    ASSIGN_OR_RETURN(mf::Matrix v0, Download(job_id_, 0));
    ASSIGN_OR_RETURN(mf::ErrorMetrics m, role_->Pretrain(v0));
    spdlog::info("job '{}': Stage 1 done on {} devices, test MSE {:.4f}", job_id_, role_->size(),
                 m.mse);
    RETURN_IF_ERROR(Report(1, m));
    return false;
  }

  // The test hook (LflHostOptions::before_submit), if any.
  void BeforeSubmit(const v1::BatchHeader& h, std::vector<v1::DeviceMessage>& msgs) {
    if (o_.before_submit) o_.before_submit(h, msgs);
  }

  // Streams `msgs` as batches under the server's size limit.
  class Submission {
   public:
    Submission(v1::DeviceCoordinator::Stub* stub, const v1::BatchHeader& header, int32_t max_bytes)
        : header_(header), max_bytes_(std::max<int32_t>(max_bytes, 1 << 16)) {
      ctx_ = net::DeadlineContext(absl::Seconds(300));
      writer_ = stub->Submit(ctx_.get(), &response_);
      *batch_.mutable_header() = header_;
    }
    bool Add(std::vector<v1::DeviceMessage>& msgs) {
      for (v1::DeviceMessage& m : msgs) {
        const size_t size = m.ByteSizeLong();
        if (bytes_ > 0 && bytes_ + size > static_cast<size_t>(max_bytes_) && !Flush()) {
          return false;
        }
        bytes_ += size;
        *batch_.add_messages() = std::move(m);
      }
      // Sent per chunk, so the server sees a busy host make progress (a host
      // silent for liveness_seconds is not waited for).
      return batch_.messages_size() == 0 || Flush();
    }
    absl::StatusOr<v1::SubmitResponse> Finish() {
      if (batch_.messages_size() > 0 || !wrote_) Flush();
      writer_->WritesDone();
      if (grpc::Status s = writer_->Finish(); !s.ok()) return net::FromGrpc(s);
      return response_;
    }

   private:
    bool Flush() {
      const bool ok = writer_->Write(batch_);
      wrote_ = true;
      batch_.Clear();
      *batch_.mutable_header() = header_;
      bytes_ = 0;
      return ok;
    }
    v1::BatchHeader header_;
    int32_t max_bytes_;
    std::unique_ptr<grpc::ClientContext> ctx_;
    v1::SubmitResponse response_;
    std::unique_ptr<grpc::ClientWriter<v1::DeviceBatch>> writer_;
    v1::DeviceBatch batch_;
    size_t bytes_ = 0;
    bool wrote_ = false;
  };

  absl::StatusOr<bool> Phase(const v1::DeviceTask& task) {
    if (o_.before_phase) o_.before_phase(task);  // tests only (lfl_host.h)
    if (role_ == nullptr || task.job_id() != job_id_) {
      return absl::FailedPreconditionError(
          "a phase task for a job this host did not pretrain for (restarted host?)");
    }
    if (std::string why = IterationRefusal(o_.policy, task.iteration(), job_.config.iterations);
        !why.empty()) {
      // The host's devices drop out of it (the server sees them silent).
      return absl::FailedPreconditionError(absl::StrCat("REFUSED a phase task: ", why));
    }
    v1::BatchHeader h;
    h.set_host(o_.host);
    h.set_job_id(job_id_);
    h.set_iteration(task.iteration());
    h.set_round(task.round());
    h.set_aggregation_id(task.aggregation_id());
    h.set_phase(task.phase());
    Submission out(stub_.get(), h, task.max_batch_bytes());
    if (task.phase() == v1::DEVICE_PHASE_ADVERTISE_KEYS) {
      std::optional<mf::Matrix> v;
      if (task.round() == 1) {
        ASSIGN_OR_RETURN(mf::Matrix got, Download(job_id_, task.iteration()));
        v = std::move(got);
      }
      const std::vector<uint64_t> devices(task.devices().begin(), task.devices().end());
      absl::StatusOr<std::vector<v1::DeviceMessage>> msgs =
          role_->OpenRound(task.iteration(), task.round(), task.session(), task.round1_survivors(),
                           devices, v.has_value() ? &*v : nullptr);
      if (!msgs.ok()) return msgs.status();
      BeforeSubmit(h, *msgs);
      out.Add(*msgs);
    } else {
      std::vector<v1::InboxMessage> inbox;
      {
        auto ctx = net::DeadlineContext(absl::Seconds(120));
        auto reader = stub_->FetchInbox(ctx.get(), h);
        v1::InboxBatch b;
        while (reader->Read(&b)) {
          for (auto& m : *b.mutable_messages()) inbox.push_back(std::move(m));
        }
        if (grpc::Status s = reader->Finish(); !s.ok()) return net::FromGrpc(s);
      }
      for (size_t begin = 0; begin < inbox.size(); begin += kAnswerChunk) {
        const size_t end = std::min(inbox.size(), begin + kAnswerChunk);
        std::vector<v1::InboxMessage> chunk(std::make_move_iterator(inbox.begin() + begin),
                                            std::make_move_iterator(inbox.begin() + end));
        ASSIGN_OR_RETURN(std::vector<v1::DeviceMessage> msgs, role_->Answer(chunk));
        BeforeSubmit(h, msgs);
        if (!out.Add(msgs)) break;  // the stream broke; Finish() says why
      }
    }
    ASSIGN_OR_RETURN(v1::SubmitResponse r, out.Finish());
    for (const v1::DeviceRejection& x : r.rejected()) {
      spdlog::warn("iteration {} round {} {}: device {} dropped: {}", task.iteration(),
                   task.round(), v1::DevicePhase_Name(task.phase()), x.device(), x.reason());
    }
    return false;
  }

  absl::StatusOr<bool> Finish(const v1::DeviceTask& task) {
    if (role_ == nullptr || task.job_id() != job_id_) {
      return absl::FailedPreconditionError("a finish task for a job this host did not run");
    }
    ASSIGN_OR_RETURN(mf::Matrix v, Download(job_id_, job_.config.iterations));
    ASSIGN_OR_RETURN(mf::ErrorMetrics m, role_->Finish(v));
    RETURN_IF_ERROR(Report(3, m));
    spdlog::info("job '{}' finished: test MSE {:.4f} over {} devices", job_id_, m.mse,
                 role_->size());
    role_.reset();
    return true;
  }

  // The job-level policy decision, before any data is touched. Empty = accept.
  std::string Admission(const net::LflJobConfig& job, int64_t num_devices) const {
    const lfl::LflConfig& c = job.config;
    std::string why = DevicePolicyRefusal(o_.policy, "lfl", c.epsilon, c.delta, c.iterations);
    if (!why.empty()) return why;
    if (own_range_.min < 0) {
      return absl::StrCat("LFL assumes ratings in [0, R]; this host's ratings are in [",
                          own_range_.min, ", ", own_range_.max,
                          "] (shift them to start at 0 in the data, or declare --rating-range)");
    }
    why = RatingRangeRefusal(own_range_, own_range_.min, c.device.rating_max);
    if (!why.empty()) return why;
    if (o_.policy.require_active_secagg && !job.active_secagg) {
      return "the job runs semi-honest secure aggregation (lfl.semi_honest_secagg), which an "
             "active server can break; this host's policy requires the active variant "
             "(require_active_secagg)";
    }
    if (job.active_secagg && !key_authority_.has_value()) {
      return "the job runs active secure aggregation, but this host has no device certificate "
             "to certify its devices' signing keys (--insecure)";
    }
    if (num_devices < o_.policy.min_devices) {
      return absl::StrCat("the task says ", num_devices,
                          " devices; this host's policy needs at "
                          "least ",
                          o_.policy.min_devices, " (min_devices)");
    }
    if (!(c.omega <= o_.policy.max_omega)) {
      return absl::StrCat("the job tolerates omega = ", c.omega,
                          " dropout; this host's policy "
                          "allows at most ",
                          o_.policy.max_omega,
                          " (max_omega): the server "
                          "could unmask sums of ceil((1 - omega) n) devices");
    }
    if (num_devices != job.num_devices) {
      // n sizes every device's share of the noise (zeta1): it must be the
      // job's granted device count, not a number the task makes up.
      return absl::StrCat("the task says ", num_devices, " devices, the job grants ",
                          job.num_devices);
    }
    return "";
  }

  // Every device of the role must afford the job's T releases.
  std::string BudgetRefusal(const LflRole& role) const {
    return device::BudgetRefusal(*ledger_, o_.first, o_.count, role.noise_multiplier(),
                                 job_.config.iterations, "device");
  }

  const LflHostOptions& o_;
  const std::atomic<bool>& stop_;
  data::RatingRange own_range_;
  std::string refused_job_;  // a job this host refused: its tasks are ignored
  data::Dataset dataset_;
  std::unique_ptr<DeviceLedger> ledger_;
  std::optional<HostKeyAuthority> key_authority_;  // null with --insecure
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::DeviceCoordinator::Stub> stub_;
  v1::HostHello hello_;
  net::LflJobConfig job_;
  std::string job_id_;
  std::unique_ptr<LflRole> role_;
};

}  // namespace

absl::Status RunLflHost(const LflHostOptions& options, const std::atomic<bool>& stop) {
  Host host(options, stop);
  return host.Run();
}

}  // namespace fedmf::device
