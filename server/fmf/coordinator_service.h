// gRPC edge of the cross-silo protocol: authenticates every party's call
// (the caller's identity is its certificate), validates the message, and
// hands it to the JobCoordinator. Operators speak server/operator_service.h.
#ifndef FEDMF_SERVER_FMF_COORDINATOR_SERVICE_H_
#define FEDMF_SERVER_FMF_COORDINATOR_SERVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/fmf/wire/matrix_codec.h"
#include "common/pki/role.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "server/fmf/job_coordinator.h"
#include "server/poll_limiter.h"
#include "server/traffic_counters.h"

namespace fedmf::server {

class CoordinatorService final : public v1::Coordinator::Service {
 public:
  // 1 MiB of float32 values: a task that carries them stays far below
  // gRPC's default 4 MiB receive limit on the party's side.
  static constexpr int64_t kMaxInlineSharedValues = int64_t{1} << 18;

  CoordinatorService(JobCoordinator* coordinator, bool insecure, int32_t max_chunk_values,
                     TrafficCounters* traffic)
      : coordinator_(coordinator),
        insecure_(insecure),
        max_chunk_values_(max_chunk_values),
        traffic_(traffic),
        encoded_(max_chunk_values) {}
  // Bytes reassembled uploads hold now (limits.upload_buffer_bytes caps it).
  int64_t upload_bytes_in_use();

  grpc::Status Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req,
                        v1::RegisterResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                         v1::Ack* resp) override;
  grpc::Status GetTask(grpc::ServerContext* ctx, const v1::GetTaskRequest* req,
                       v1::Task* resp) override;
  grpc::Status ReplyOffer(grpc::ServerContext* ctx, const v1::OfferReply* req,
                          v1::Ack* resp) override;
  grpc::Status DownloadShared(grpc::ServerContext* ctx, const v1::DownloadRequest* req,
                              grpc::ServerWriter<v1::MatrixChunk>* writer) override;
  grpc::Status UploadUpdate(grpc::ServerContext* ctx, grpc::ServerReader<v1::MatrixChunk>* reader,
                            v1::UploadResponse* resp) override;
  grpc::Status ReportPrivacy(grpc::ServerContext* ctx, const v1::PrivacyReport* req,
                             v1::Ack* resp) override;
  grpc::Status PsiSend(grpc::ServerContext* ctx, const v1::PsiSendRequest* req,
                       v1::Ack* resp) override;
  grpc::Status PsiFetch(grpc::ServerContext* ctx, const v1::PsiFetchRequest* req,
                        v1::PsiFetchResponse* resp) override;

  // Caps concurrent long-polls (null = no cap); owned by the caller.
  void set_poll_limiter(PollLimiter* limiter) { poll_limiter_ = limiter; }

 private:
  // The caller's party name: from its certificate (role must be party, and
  // the party in allowed_parties), and the name the message claims must be
  // the same — a party speaks only for itself. In --insecure mode the claim
  // is taken at its word. Refused too when the call is over its caller's
  // quota (server/call_governor.h).
  absl::StatusOr<std::string> Caller(const grpc::ServerContext& ctx, const std::string& claimed);

  // One upload stream per party: while alive, it is the party's upload and
  // holds the reassembly memory it was charged. A newer upload of the same
  // party cancels it (a party that reconnects is not locked out by its own
  // stalled stream).
  class UploadSlot {
   public:
    UploadSlot(CoordinatorService* service, std::string party, grpc::ServerContext* ctx);
    ~UploadSlot();
    UploadSlot(const UploadSlot&) = delete;
    UploadSlot& operator=(const UploadSlot&) = delete;
    // Reserves `bytes` of limits.upload_buffer_bytes for this upload.
    absl::Status Charge(int64_t bytes);

   private:
    CoordinatorService* service_;
    std::string party_;
    grpc::ServerContext* ctx_;
    int64_t charged_ = 0;
  };
  // Puts a ROUND or FINISH task's shared matrix on the task itself (the
  // chunks a download would stream) when it has at most
  // kMaxInlineSharedValues values.
  void InlineShared(const std::string& party, v1::Task& task);
  // The round's shared matrix as the caller may see it, encoded once for
  // every party (encoded_); ResourceExhausted above `max_values` values.
  absl::StatusOr<std::shared_ptr<const std::vector<v1::MatrixChunk>>> SharedChunks(
      const std::string& party, const std::string& job_id, int32_t round, int64_t max_values);
  // `bytes` of a shared matrix sent to `party`, streamed or inlined.
  void CountDownload(const std::string& job_id, const std::string& party, int64_t bytes);

  JobCoordinator* coordinator_;
  bool insecure_;
  int32_t max_chunk_values_;
  TrafficCounters* traffic_;
  PollLimiter* poll_limiter_ = nullptr;
  net::EncodedMatrixCache encoded_;  // the round's shared matrix, for every party
  absl::Mutex uploads_mu_;
  std::map<std::string, grpc::ServerContext*> uploads_ ABSL_GUARDED_BY(uploads_mu_);
  int64_t upload_bytes_ ABSL_GUARDED_BY(uploads_mu_) = 0;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_FMF_COORDINATOR_SERVICE_H_
