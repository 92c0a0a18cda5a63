// Who is calling an RPC: one rule for every service that names its caller
// (coordinator: parties; device and Hua services: device hosts; aggregator:
// server, device hosts, operators). Before, four copies had drifted apart:
// the Hua copy refused an empty claim under mTLS, the aggregator's accepted
// one in insecure mode and named its caller "".
#ifndef FEDMF_COMMON_NET_CALLER_H_
#define FEDMF_COMMON_NET_CALLER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/pki/identity.h"
#include "grpcpp/grpcpp.h"

namespace fedmf::net {

struct CallerRule {
  pki::Role role;  // the certificate role the call needs
  // The request field that names the caller ("party", "host"), or empty when
  // the request has none (server and operator calls).
  absl::string_view field;
  absl::string_view serves;  // for messages: "parties", "device hosts", ...
};

// The caller's name.
//  - mTLS (`certificate` given): the certificate's name. Its role must be
//    rule.role (PermissionDenied). A non-empty `claimed` must equal it
//    (PermissionDenied, and a warning is logged: a roster member trying to
//    speak for another is an incident); an empty claim means "the
//    certificate's own name".
//  - insecure (`certificate` null): the claim is all there is, so a rule with
//    a field requires it (InvalidArgument "field 'F': required"); a rule
//    without one gives "".
absl::StatusOr<std::string> CheckCaller(const pki::PeerIdentity* certificate,
                                        const CallerRule& rule, const std::string& claimed);

// CheckCaller on the RPC's verified certificate (PeerIdentityOf), or with
// none when `insecure`.
absl::StatusOr<std::string> AuthorizeCaller(const grpc::ServerContext& context, bool insecure,
                                            const CallerRule& rule, const std::string& claimed);

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_CALLER_H_
