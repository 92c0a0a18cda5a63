#include "common/net/client_context.h"

namespace fedmf::net {

std::unique_ptr<grpc::ClientContext> DeadlineContext(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

}  // namespace fedmf::net
