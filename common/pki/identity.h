// Who is on the other end of an mTLS connection, and whether a certificate
// chains to the federation CA.
#ifndef FEDMF_COMMON_PKI_IDENTITY_H_
#define FEDMF_COMMON_PKI_IDENTITY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/pki/role.h"

namespace fedmf::pki {

struct PeerIdentity {
  std::string name;  // Subject CN: the party/device/server id.
  Role role;         // Subject OU.

  bool operator==(const PeerIdentity&) const = default;
};

// Name and role of the first certificate in `pem`. Does NOT verify the
// certificate: call it on the peer certificate gRPC reports (auth_context
// property "x509_pem_cert"), which the TLS handshake already verified against
// the federation CA. InvalidArgument unless there is exactly one CN that is a
// valid name (ca.h ValidateName) and exactly one OU that is a known role.
absl::StatusOr<PeerIdentity> IdentityFromCertificatePem(const std::string& pem);

// OK iff the first certificate in `cert_pem` chains to `ca_pem` (the only trust
// anchor) and is valid at `at` (default: now). The message carries OpenSSL's
// reason, e.g. "certificate has expired".
absl::Status VerifyCertificate(const std::string& cert_pem, const std::string& ca_pem);
absl::Status VerifyCertificate(const std::string& cert_pem, const std::string& ca_pem,
                               absl::Time at);

// notAfter of the first certificate in `pem`, for expiry warnings and metrics.
absl::StatusOr<absl::Time> CertificateNotAfter(const std::string& pem);

// "sha256:<64 hex>" over the first certificate's DER encoding (what
// `openssl x509 -fingerprint -sha256` shows, without colons): read out of band
// to check a copy of ca.crt is the federation's.
absl::StatusOr<std::string> CertificateFingerprint(const std::string& pem);

}  // namespace fedmf::pki

#endif  // FEDMF_COMMON_PKI_IDENTITY_H_
