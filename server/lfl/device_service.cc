#include "server/lfl/device_service.h"

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/log/log.h"
#include "common/net/caller.h"
#include "common/net/credentials.h"
#include "server/call_governor.h"
#include "server/size_limits.h"

namespace fedmf::server {
namespace {

using net::ToGrpc;

// Inbox messages per streamed batch are bounded by bytes, not count.
constexpr size_t kMaxInboxBatchBytes = 2 << 20;

}  // namespace

absl::StatusOr<std::string> DeviceService::Caller(const grpc::ServerContext& ctx,
                                                  const std::string& claimed) {
  RETURN_IF_ERROR(CallAdmitted(ctx));
  return net::AuthorizeCaller(ctx, insecure_, {pki::Role::kDevice, "host", "device hosts"},
                              claimed);
}

grpc::Status DeviceService::GetDeviceTask(grpc::ServerContext* ctx, const v1::HostHello* req,
                                          v1::DeviceTask* resp) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  if (auto s = CheckHostHello(*req, coordinator_->limits()); !s.ok()) return ToGrpc(s);
  PollLimiter::Slot slot;
  if (poll_limiter_ != nullptr) {
    if (auto s = poll_limiter_->Acquire(&slot); !s.ok()) return ToGrpc(s);
  }
  auto task = coordinator_->GetTask(*host, *req);
  if (!task.ok()) return ToGrpc(task.status());
  *resp = std::move(*task);
  traffic_->bytes_out += static_cast<int64_t>(resp->ByteSizeLong());
  return grpc::Status::OK;
}

grpc::Status DeviceService::DownloadModel(grpc::ServerContext* ctx, const v1::ModelRequest* req,
                                          grpc::ServerWriter<v1::MatrixChunk>* writer) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  auto v = coordinator_->Model(*host, req->job_id(), req->iteration());
  if (!v.ok()) return ToGrpc(v.status());
  const auto chunks = encoded_.Encode(*v, req->job_id(), req->iteration());
  for (const v1::MatrixChunk& chunk : *chunks) {
    traffic_->bytes_out += static_cast<int64_t>(chunk.ByteSizeLong());
    if (!writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
    CallProgressed(*ctx);
  }
  return grpc::Status::OK;
}

grpc::Status DeviceService::FetchInbox(grpc::ServerContext* ctx, const v1::BatchHeader* req,
                                       grpc::ServerWriter<v1::InboxBatch>* writer) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  auto inbox = coordinator_->Inbox(*host, *req);
  if (!inbox.ok()) return ToGrpc(inbox.status());
  v1::InboxBatch batch;
  size_t bytes = 0;
  auto flush = [&]() {
    *batch.mutable_header() = *req;
    traffic_->bytes_out += static_cast<int64_t>(batch.ByteSizeLong());
    const bool ok = writer->Write(batch);
    if (ok) CallProgressed(*ctx);
    batch.Clear();
    bytes = 0;
    return ok;
  };
  for (v1::InboxMessage& m : *inbox) {
    const size_t size = m.ByteSizeLong();
    if (bytes > 0 && bytes + size > kMaxInboxBatchBytes && !flush()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
    }
    bytes += size;
    *batch.add_messages() = std::move(m);
  }
  if (!flush()) return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
  return grpc::Status::OK;
}

grpc::Status DeviceService::Submit(grpc::ServerContext* ctx,
                                   grpc::ServerReader<v1::DeviceBatch>* reader,
                                   v1::SubmitResponse* resp) {
  // Under mTLS the certificate's role and its grants in the active job are
  // checked before the first batch is read: a host outside the job holds
  // no thread and is not logged. The header's claim is checked below.
  if (!insecure_) {
    auto host = Caller(*ctx, "");
    if (!host.ok()) return ToGrpc(host.status());
    if (auto s = coordinator_->ExpectsSubmitFrom(*host); !s.ok()) return ToGrpc(s);
  } else if (auto s = CallAdmitted(*ctx); !s.ok()) {
    return ToGrpc(s);
  }
  v1::DeviceBatch batch;
  if (!reader->Read(&batch)) {
    return ToGrpc(absl::InvalidArgumentError("empty submission: send a batch with a header"));
  }
  CallProgressed(*ctx);
  auto host = Caller(*ctx, batch.header().host());
  if (!host.ok()) return ToGrpc(host.status());
  if (insecure_) {
    if (auto s = coordinator_->ExpectsSubmitFrom(*host); !s.ok()) return ToGrpc(s);
  }
  const v1::BatchHeader header = batch.header();
  if (auto s = coordinator_->CheckBatch(*host, header); !s.ok()) {
    spdlog::warn("batch from '{}' refused: {}", *host, s.message());
    return ToGrpc(s);
  }
  const int64_t max_listed = coordinator_->limits().max_rejections_per_response;
  int32_t accepted = 0;
  int32_t unlisted = 0;
  while (true) {
    traffic_->bytes_in += static_cast<int64_t>(batch.ByteSizeLong());
    const v1::BatchHeader& h = batch.header();
    if (h.job_id() != header.job_id() || h.iteration() != header.iteration() ||
        h.round() != header.round() || h.aggregation_id() != header.aggregation_id() ||
        h.phase() != header.phase() || (!h.host().empty() && h.host() != header.host())) {
      return ToGrpc(absl::InvalidArgumentError(
          "field 'header': every batch of one submission must carry the same header"));
    }
    for (const v1::DeviceMessage& m : batch.messages()) {
      absl::Status s = coordinator_->SubmitOne(*host, header, m);
      if (s.ok()) {
        ++accepted;
      } else if (resp->rejected_size() < max_listed) {
        v1::DeviceRejection* r = resp->add_rejected();
        r->set_device(m.device());
        r->set_reason(std::string(s.message()));
      } else {
        ++unlisted;  // counted, not listed: the answer stays small
      }
    }
    if (!reader->Read(&batch)) break;
    CallProgressed(*ctx);
  }
  {
    // The last host's submission may close the phase here (unmasking).
    ServerWorkForCall working(*ctx);
    coordinator_->EndSubmit(*host, header);
  }
  resp->set_accepted(accepted);
  resp->set_rejected_unlisted(unlisted);
  return grpc::Status::OK;
}

grpc::Status DeviceService::ReportMetrics(grpc::ServerContext* ctx,
                                          const v1::DeviceMetricsReport* req, v1::Ack*) {
  auto host = Caller(*ctx, req->host());
  if (!host.ok()) return ToGrpc(host.status());
  ServerWorkForCall working(*ctx);  // may close Stage 1 or 3
  return ToGrpc(coordinator_->ReportMetrics(*host, *req));
}

}  // namespace fedmf::server
