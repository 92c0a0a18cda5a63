// Certificate signing requests (PKCS#10): how a partner joins without anyone
// else ever holding its private key. The partner makes its key pair and a
// request on its own host (`fedmf ca request`); the federation operator checks
// the request against what it intends to sign and signs it (`fedmf ca sign`,
// ca.h SignCertificateRequest). Only public material travels: the request one
// way, the certificate and ca.crt the other.
#ifndef FEDMF_COMMON_PKI_CERTIFICATE_REQUEST_H_
#define FEDMF_COMMON_PKI_CERTIFICATE_REQUEST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/pki/role.h"

namespace fedmf::pki {

// What a request asks for, once checked.
struct CertificateRequestInfo {
  std::string name;
  Role role;
  std::vector<std::string> sans;  // "DNS:x" / "IP:1.2.3.4", DNS:<name> first.
  std::string key_fingerprint;    // "sha256:<64 hex>" of the public key (SPKI).
};

// Creates out_dir (0700) if needed, then out_dir/<name>.key (0600, a fresh
// ECDSA P-256 key) and out_dir/<name>.csr: subject CN=name, OU=role, a
// requested subjectAltName DNS:name plus each of `dns_names_or_ips`, signed by
// the new key (proof of possession). AlreadyExists if either file is present;
// InvalidArgument for a bad name or SAN.
absl::StatusOr<CertificateRequestInfo> CreateCertificateRequest(
    const std::string& out_dir, const std::string& name, Role role,
    const std::vector<std::string>& dns_names_or_ips);

// What the operator intends to sign.
struct CertificateRequestExpectation {
  std::string name;
  Role role;
  // SANs the certificate will carry besides DNS:<name> (ca issue's --san).
  std::vector<std::string> sans;
  // If set, the request's key must have this fingerprint (as the partner read
  // it out from `fedmf ca request`).
  std::string key_fingerprint;
};

// Checks a PEM request (`label` names it in messages) before anything is
// signed, refusing (InvalidArgument, saying what differs and what to do) a
// request that is not exactly what `fedmf ca request` makes for `expected`:
// its signature must verify under its own key (the requester holds the
// private key), the key must be ECDSA P-256, the subject exactly CN=<name>,
// OU=<role>, the requested SANs among DNS:<name> and `expected.sans`, and the
// only other extension allowed is basicConstraints CA:FALSE (a request to be
// a CA, or for key usages, is refused: the CA decides those).
absl::StatusOr<CertificateRequestInfo> CheckCertificateRequest(
    const std::string& csr_pem, const std::string& label,
    const CertificateRequestExpectation& expected);

}  // namespace fedmf::pki

#endif  // FEDMF_COMMON_PKI_CERTIFICATE_REQUEST_H_
