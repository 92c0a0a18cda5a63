// A client call's context with a deadline: every RPC fedmf makes has one, so
// a peer that stops answering fails the call instead of hanging it.
#ifndef FEDMF_COMMON_NET_CLIENT_CONTEXT_H_
#define FEDMF_COMMON_NET_CLIENT_CONTEXT_H_

#include <functional>
#include <memory>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace fedmf::net {

// A fresh context (one per call: gRPC contexts are single-use) whose deadline
// is `timeout` from now.
std::unique_ptr<grpc::ClientContext> DeadlineContext(absl::Duration timeout);

// gRPC's own refusal when a server's thread quota (fedmf-server max_threads)
// is full for a moment: a flood of calls being refused can hold every spare
// thread at once. Transient: the same call a moment later finds a thread.
// (fedmf-server's per-role and per-certificate quotas refuse with messages of
// their own; those are not transient for the caller and are not matched.)
bool IsThreadQuotaRefusal(const grpc::Status& s);

// Runs `call` (which makes one RPC with a fresh context) again while it ends
// in a thread-quota refusal: up to `attempts` times, backing off 20 ms,
// doubling up to 1 s. Returns the last status.
grpc::Status RetryThreadQuotaRefusals(const std::function<grpc::Status()>& call, int attempts = 8);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_CLIENT_CONTEXT_H_
