// gRPC edge of the LFL device protocol (proto/fedmf/v1/device.proto): the
// caller is a device host identified by its certificate (role device); the
// name a message claims must be that certificate's name. Wire messages are
// handed to LflCoordinator, which authorizes every device id against the
// job's grants.
#ifndef FEDMF_SERVER_LFL_DEVICE_SERVICE_H_
#define FEDMF_SERVER_LFL_DEVICE_SERVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/fmf/wire/matrix_codec.h"
#include "fedmf/v1/device.grpc.pb.h"
#include "server/lfl/lfl_coordinator.h"
#include "server/poll_limiter.h"
#include "server/traffic_counters.h"

namespace fedmf::server {

class DeviceService final : public v1::DeviceCoordinator::Service {
 public:
  DeviceService(LflCoordinator* coordinator, bool insecure, int32_t max_chunk_values,
                TrafficCounters* traffic)
      : coordinator_(coordinator),
        insecure_(insecure),
        traffic_(traffic),
        encoded_(max_chunk_values) {}

  grpc::Status GetDeviceTask(grpc::ServerContext* ctx, const v1::HostHello* req,
                             v1::DeviceTask* resp) override;
  grpc::Status DownloadModel(grpc::ServerContext* ctx, const v1::ModelRequest* req,
                             grpc::ServerWriter<v1::MatrixChunk>* writer) override;
  grpc::Status FetchInbox(grpc::ServerContext* ctx, const v1::BatchHeader* req,
                          grpc::ServerWriter<v1::InboxBatch>* writer) override;
  grpc::Status Submit(grpc::ServerContext* ctx, grpc::ServerReader<v1::DeviceBatch>* reader,
                      v1::SubmitResponse* resp) override;
  grpc::Status ReportMetrics(grpc::ServerContext* ctx, const v1::DeviceMetricsReport* req,
                             v1::Ack* resp) override;

  // Caps concurrent long-polls (null = no cap); owned by the caller.
  void set_poll_limiter(PollLimiter* limiter) { poll_limiter_ = limiter; }

 private:
  absl::StatusOr<std::string> Caller(const grpc::ServerContext& ctx, const std::string& claimed);

  LflCoordinator* coordinator_;
  bool insecure_;
  TrafficCounters* traffic_;
  PollLimiter* poll_limiter_ = nullptr;
  net::EncodedMatrixCache encoded_;  // the iteration's model, for every host
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_LFL_DEVICE_SERVICE_H_
