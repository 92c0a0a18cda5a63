// The federation CA: one self-signed ECDSA P-256 root per federation, and the
// leaf certificates it issues to every daemon. Backs `fedmf ca init|issue`.
//
// Layout: the CA directory holds ca.key (0600) and ca.crt; an output directory
// holds <name>.key (0600), <name>.crt and a copy of ca.crt, which is exactly
// what LoadTlsFiles (tls_files.h) reads. Nothing is ever overwritten: files are
// written to a temp file and moved into place only if the target is absent.
#ifndef FEDMF_COMMON_PKI_CA_H_
#define FEDMF_COMMON_PKI_CA_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/pki/certificate_request.h"
#include "common/pki/role.h"

namespace fedmf::pki {

// A certificate name (party/device/server id) is 1-64 characters of
// [a-z0-9._-] starting with a letter or digit: it is also a DNS SAN and a file
// name, so nothing else is safe in every place it ends up.
absl::Status ValidateName(std::string_view name);

// Creates `dir` (0700) if needed, then dir/ca.key and dir/ca.crt: CN
// "<federation_name> CA", CA:TRUE (critical, pathlen 0: the CA issues only
// leaves), keyUsage keyCertSign+cRLSign, valid from now for `validity`.
// AlreadyExists (naming the file) if either file is present.
absl::Status InitCa(const std::string& dir, const std::string& federation_name,
                    absl::Duration validity);

// Issues out_dir/<name>.key (0600) and out_dir/<name>.crt signed by the CA in
// `ca_dir`, and copies ca.crt into `out_dir` (created 0700 if needed) unless it
// is already there. Subject CN=name, OU=role; SAN DNS:name plus each entry of
// `dns_names_or_ips` (IPv4/IPv6 literals become IP SANs, anything else must be
// a DNS name); EKU serverAuth+clientAuth; CA:FALSE.
// Errors: InvalidArgument for a bad name/SAN/validity; AlreadyExists if the key
// or certificate exists (remove both to re-issue); FailedPrecondition if the
// CA has expired, would expire before the certificate, or out_dir/ca.crt holds
// a different CA; NotFound if the CA is missing.
absl::Status IssueCertificate(const std::string& ca_dir, const std::string& out_dir,
                              const std::string& name, Role role,
                              const std::vector<std::string>& dns_names_or_ips,
                              absl::Duration validity);

// Signs the request in `csr_path` (certificate_request.h: made by
// `fedmf ca request` on the partner's host) after CheckCertificateRequest
// against `expected`: writes out_dir/<name>.crt for the request's public key
// (subject, SANs and extensions exactly as IssueCertificate makes them; SANs
// DNS:<name> plus expected.sans, nothing taken from the request) and copies
// ca.crt into out_dir. No private key is written or ever seen. Errors as
// IssueCertificate, plus NotFound for a missing request and InvalidArgument
// for a request that is refused (the message says why).
absl::StatusOr<CertificateRequestInfo> SignCertificateRequest(
    const std::string& ca_dir, const std::string& csr_path, const std::string& out_dir,
    const CertificateRequestExpectation& expected, absl::Duration validity);

}  // namespace fedmf::pki

#endif  // FEDMF_COMMON_PKI_CA_H_
