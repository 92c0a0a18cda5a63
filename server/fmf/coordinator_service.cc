#include "server/fmf/coordinator_service.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/log/log.h"
#include "common/net/caller.h"
#include "common/net/credentials.h"
#include "server/call_governor.h"
#include "server/size_limits.h"

namespace fedmf::server {

using net::ToGrpc;

absl::StatusOr<std::string> CoordinatorService::Caller(const grpc::ServerContext& ctx,
                                                       const std::string& claimed) {
  RETURN_IF_ERROR(CallAdmitted(ctx));
  ASSIGN_OR_RETURN(
      std::string party,
      net::AuthorizeCaller(ctx, insecure_, {pki::Role::kParty, "party", "parties"}, claimed));
  if (!coordinator_->AllowedParty(party)) {
    return absl::PermissionDeniedError(absl::StrCat("party '", base::EscapePeerText(party, 128),
                                                    "' is not allowed on this server"));
  }
  return party;
}

CoordinatorService::UploadSlot::UploadSlot(CoordinatorService* service, std::string party,
                                           grpc::ServerContext* ctx)
    : service_(service), party_(std::move(party)), ctx_(ctx) {
  absl::MutexLock lock(&service_->uploads_mu_);
  auto [it, fresh] = service_->uploads_.try_emplace(party_, ctx_);
  if (!fresh) {
    // The older stream's handler is alive until it erases itself, which
    // takes this lock: cancelling it here is safe. Its Read then fails and
    // it frees its memory.
    it->second->TryCancel();
    spdlog::warn("party '{}' opened a new upload; its older upload stream is cancelled", party_);
    it->second = ctx_;
  }
}

CoordinatorService::UploadSlot::~UploadSlot() {
  absl::MutexLock lock(&service_->uploads_mu_);
  service_->upload_bytes_ -= charged_;
  if (auto it = service_->uploads_.find(party_);
      it != service_->uploads_.end() && it->second == ctx_) {
    service_->uploads_.erase(it);
  }
}

absl::Status CoordinatorService::UploadSlot::Charge(int64_t bytes) {
  const int64_t budget = service_->coordinator_->limits().upload_buffer_bytes;
  absl::MutexLock lock(&service_->uploads_mu_);
  if (service_->upload_bytes_ + bytes > budget) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the server is reassembling ", service_->upload_bytes_,
        " bytes of uploads; this one needs ", bytes,
        " more than limits.upload_buffer_bytes = ", budget, " allows: retry in a moment"));
  }
  service_->upload_bytes_ += bytes;
  charged_ += bytes;
  return absl::OkStatus();
}

int64_t CoordinatorService::upload_bytes_in_use() {
  absl::MutexLock lock(&uploads_mu_);
  return upload_bytes_;
}

grpc::Status CoordinatorService::Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req,
                                          v1::RegisterResponse* resp) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  if (req->state_id().size() > 256) {  // kept in memory per party and compared
    return ToGrpc(absl::InvalidArgumentError("field 'state_id': longer than 256 bytes"));
  }
  if (auto s = coordinator_->Register(*party, req->state_id()); !s.ok()) return ToGrpc(s);
  resp->set_server_version("fedmf-server 0.1");
  resp->set_max_chunk_values(max_chunk_values_);
  resp->set_liveness_seconds(absl::ToDoubleSeconds(coordinator_->liveness()));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext* ctx,
                                           const v1::HeartbeatRequest* req, v1::Ack*) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  return ToGrpc(coordinator_->Heartbeat(*party));
}

grpc::Status CoordinatorService::GetTask(grpc::ServerContext* ctx, const v1::GetTaskRequest* req,
                                         v1::Task* resp) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  PollLimiter::Slot slot;
  if (poll_limiter_ != nullptr) {
    if (auto s = poll_limiter_->Acquire(&slot); !s.ok()) return ToGrpc(s);
  }
  *resp = coordinator_->GetTask(*party);
  InlineShared(*party, *resp);
  return grpc::Status::OK;
}

void CoordinatorService::InlineShared(const std::string& party, v1::Task& task) {
  if (task.kind() != v1::TASK_KIND_ROUND && task.kind() != v1::TASK_KIND_FINISH) return;
  auto chunks = SharedChunks(party, task.job_id(), task.round(), kMaxInlineSharedValues);
  // Not now (the party's DownloadShared will say why) or too large for one
  // message: the party downloads it.
  if (!chunks.ok()) return;
  int64_t sent = 0;
  for (const v1::MatrixChunk& chunk : **chunks) {
    sent += static_cast<int64_t>(chunk.ByteSizeLong());
    *task.add_shared() = chunk;
  }
  CountDownload(task.job_id(), party, sent);  // as the download it replaces
}

absl::StatusOr<std::shared_ptr<const std::vector<v1::MatrixChunk>>>
CoordinatorService::SharedChunks(const std::string& party, const std::string& job_id, int32_t round,
                                 int64_t max_values) {
  ASSIGN_OR_RETURN(std::shared_ptr<const mf::Matrix> shared,
                   coordinator_->SharedFor(party, job_id, round));
  if (shared->size() > max_values) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the shared matrix has ", shared->size(), " values, over ", max_values));
  }
  return encoded_.Encode(std::move(shared), job_id, round);
}

void CoordinatorService::CountDownload(const std::string& job_id, const std::string& party,
                                       int64_t bytes) {
  traffic_->bytes_out += bytes;
  coordinator_->CountMatrixTraffic(job_id, party, 0, bytes);
}

grpc::Status CoordinatorService::ReplyOffer(grpc::ServerContext* ctx, const v1::OfferReply* req,
                                            v1::Ack*) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  return ToGrpc(coordinator_->ReplyOffer(*party, *req));
}

grpc::Status CoordinatorService::DownloadShared(grpc::ServerContext* ctx,
                                                const v1::DownloadRequest* req,
                                                grpc::ServerWriter<v1::MatrixChunk>* writer) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  auto chunks =
      SharedChunks(*party, req->job_id(), req->round(), std::numeric_limits<int64_t>::max());
  if (!chunks.ok()) return ToGrpc(chunks.status());
  int64_t sent = 0;
  grpc::Status status = grpc::Status::OK;
  for (const v1::MatrixChunk& chunk : **chunks) {
    if (!writer->Write(chunk)) {
      status = grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
      break;
    }
    CallProgressed(*ctx);
    sent += static_cast<int64_t>(chunk.ByteSizeLong());
  }
  CountDownload(req->job_id(), *party, sent);
  return status;
}

grpc::Status CoordinatorService::UploadUpdate(grpc::ServerContext* ctx,
                                              grpc::ServerReader<v1::MatrixChunk>* reader,
                                              v1::UploadResponse* resp) {
  if (auto s = CallAdmitted(*ctx); !s.ok()) return ToGrpc(s);
  // Under mTLS the certificate names the uploader, and its role, the
  // server's allowed_parties and the active job's roster are checked before
  // a byte is read: a stream nobody expects never holds a thread. The
  // header's name is checked against the same certificate below. Without
  // TLS the header's name is the only one there is.
  const net::CallerRule rule{pki::Role::kParty, "header.party", "parties"};
  std::optional<pki::PeerIdentity> certificate;
  std::optional<UploadSlot> slot;
  if (!insecure_) {
    auto id = net::PeerIdentityOf(*ctx);
    if (!id.ok()) return ToGrpc(id.status());
    auto who = net::CheckCaller(&*id, rule, "");
    if (!who.ok()) return ToGrpc(who.status());
    if (auto s = coordinator_->ExpectsUploadFrom(*who); !s.ok()) return ToGrpc(s);
    certificate = *std::move(id);
    slot.emplace(this, *who, ctx);
  }
  v1::MatrixChunk chunk;
  if (!reader->Read(&chunk)) {
    return ToGrpc(absl::InvalidArgumentError("empty upload: send a header chunk first"));
  }
  CallProgressed(*ctx);
  traffic_->bytes_in += static_cast<int64_t>(chunk.ByteSizeLong());
  if (!chunk.has_header()) {
    return ToGrpc(absl::InvalidArgumentError("field 'header': the first chunk must be the header"));
  }
  auto party =
      net::CheckCaller(certificate ? &*certificate : nullptr, rule, chunk.header().party());
  if (!party.ok()) return ToGrpc(party.status());
  if (!slot.has_value()) {
    if (auto s = coordinator_->ExpectsUploadFrom(*party); !s.ok()) return ToGrpc(s);
    slot.emplace(this, *party, ctx);
  }
  const std::string job_id = chunk.header().job_id();
  const int32_t round = chunk.header().round();
  // A report riding on the header is about this upload's round and comes
  // from the caller; it is taken only after the update is (below).
  std::optional<v1::PrivacyReport> report;
  const bool await_next_task = chunk.await_next_task();
  chunk.clear_await_next_task();
  if (chunk.has_report()) {
    report = chunk.report();
    chunk.clear_report();
    if (report->job_id() != job_id || report->round() != round) {
      return ToGrpc(
          absl::InvalidArgumentError("field 'report': its job_id and round must be the header's"));
    }
    if (auto claimed = Caller(*ctx, report->party()); !claimed.ok()) {
      return ToGrpc(claimed.status());
    }
  }
  // Roster, round and shape are checked before a single value is buffered.
  auto shape = coordinator_->UploadShape(*party, job_id, round);
  if (!shape.ok()) return ToGrpc(shape.status());
  // The reassembly's memory (the matrix and the float32 copy the checksum
  // is taken over) is charged before the assembler allocates it.
  const int64_t values = static_cast<int64_t>(shape->first) * shape->second;
  if (auto s = slot->Charge(values * static_cast<int64_t>(sizeof(double) + sizeof(float)));
      !s.ok()) {
    return ToGrpc(s);
  }
  // From here the job is the caller's: its bytes count as its traffic,
  // whether the upload completes or not.
  int64_t received = static_cast<int64_t>(chunk.ByteSizeLong());
  absl::Cleanup count = [&] { coordinator_->CountMatrixTraffic(job_id, *party, received, 0); };
  net::MatrixAssembler assembler(job_id, round, shape->first, shape->second, max_chunk_values_);
  if (auto s = assembler.Add(chunk); !s.ok()) return ToGrpc(s);
  while (reader->Read(&chunk)) {
    CallProgressed(*ctx);
    const int64_t bytes = static_cast<int64_t>(chunk.ByteSizeLong());
    traffic_->bytes_in += bytes;
    received += bytes;
    if (auto s = assembler.Add(chunk); !s.ok()) {
      spdlog::warn("malformed upload from '{}' (job '{}', round {}): {}", *party, job_id, round,
                   s.message());
      return ToGrpc(s);
    }
  }
  if (ctx->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "the upload was cut off (a newer upload of this party, or no progress "
                        "within calls.idle_seconds)");
  }
  auto matrix = assembler.Finish();
  if (!matrix.ok()) return ToGrpc(matrix.status());
  if (auto s = coordinator_->SubmitUpdate(*party, job_id, round, *matrix); !s.ok()) {
    return ToGrpc(s);
  }
  resp->set_round(round);
  resp->set_accepted(true);
  if (report.has_value()) {
    // The update stands either way; a refused report is left to the party's
    // own ReportPrivacy call, which returns the error to it.
    if (absl::Status s = coordinator_->ReportPrivacy(*party, *report); s.ok()) {
      resp->set_report_taken(true);
    } else {
      spdlog::warn("report on the upload from '{}' (job '{}', round {}) not taken: {}", *party,
                   job_id, round, s.message());
    }
  }
  if (await_next_task) {
    // GetTask's long poll, on this call: the party needs no second call to
    // learn the next round. Past the poll cap it is left to GetTask (which
    // the cap then refuses or admits as usual).
    PollLimiter::Slot poll;
    if (poll_limiter_ == nullptr || poll_limiter_->Acquire(&poll).ok()) {
      v1::Task* next = resp->mutable_next_task();
      *next = coordinator_->GetTask(*party);
      InlineShared(*party, *next);
    }
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::ReportPrivacy(grpc::ServerContext* ctx,
                                               const v1::PrivacyReport* req, v1::Ack*) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  return ToGrpc(coordinator_->ReportPrivacy(*party, *req));
}

grpc::Status CoordinatorService::PsiSend(grpc::ServerContext* ctx, const v1::PsiSendRequest* req,
                                         v1::Ack*) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  traffic_->bytes_in += static_cast<int64_t>(req->ByteSizeLong());
  return ToGrpc(coordinator_->PsiSend(*party, *req));
}

grpc::Status CoordinatorService::PsiFetch(grpc::ServerContext* ctx, const v1::PsiFetchRequest* req,
                                          v1::PsiFetchResponse* resp) {
  auto party = Caller(*ctx, req->party());
  if (!party.ok()) return ToGrpc(party.status());
  PollLimiter::Slot slot;
  if (poll_limiter_ != nullptr) {
    if (auto s = poll_limiter_->Acquire(&slot); !s.ok()) return ToGrpc(s);
  }
  auto response = coordinator_->PsiFetch(*party, *req);
  if (!response.ok()) return ToGrpc(response.status());
  *resp = std::move(*response);
  traffic_->bytes_out += static_cast<int64_t>(resp->ByteSizeLong());
  return grpc::Status::OK;
}

}  // namespace fedmf::server
