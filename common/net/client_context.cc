#include "common/net/client_context.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace fedmf::net {

std::unique_ptr<grpc::ClientContext> DeadlineContext(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

bool IsThreadQuotaRefusal(const grpc::Status& s) {
  // The text gRPC's synchronous server sends when its ResourceQuota has no
  // thread for a new call (src/cpp/server/server_cc.cc, grpc 1.51).
  return s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         s.error_message() == "Server Threadpool Exhausted";
}

grpc::Status RetryThreadQuotaRefusals(const std::function<grpc::Status()>& call, int attempts) {
  absl::Duration backoff = absl::Milliseconds(20);
  grpc::Status s = call();
  for (int i = 1; i < attempts && IsThreadQuotaRefusal(s); ++i) {
    absl::SleepFor(backoff);
    backoff = std::min(2 * backoff, absl::Seconds(1));
    s = call();
  }
  return s;
}

}  // namespace fedmf::net
