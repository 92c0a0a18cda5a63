// A client call's context with a deadline: every RPC fedmf makes has one, so
// a peer that stops answering fails the call instead of hanging it.
#ifndef FEDMF_COMMON_NET_CLIENT_CONTEXT_H_
#define FEDMF_COMMON_NET_CLIENT_CONTEXT_H_

#include <memory>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace fedmf::net {

// A fresh context (one per call: gRPC contexts are single-use) whose deadline
// is `timeout` from now.
std::unique_ptr<grpc::ClientContext> DeadlineContext(absl::Duration timeout);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_CLIENT_CONTEXT_H_
