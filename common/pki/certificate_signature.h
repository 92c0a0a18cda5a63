// Signing with the private key of an mTLS certificate, and verifying such a
// signature against the federation CA. Used to certify secure-aggregation
// signing keys (common/secagg/signing.h): a fedmf-device host signs
// KeyBindingStatement(job, device, key) with its device-certificate key, and
// a neighbour on another host verifies that statement with the host's
// certificate, which must chain to the federation CA and carry the device role.
// The statement bytes are the caller's; this file knows nothing of secagg.
#ifndef FEDMF_COMMON_PKI_CERTIFICATE_SIGNATURE_H_
#define FEDMF_COMMON_PKI_CERTIFICATE_SIGNATURE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/pki/identity.h"
#include "common/pki/role.h"

namespace fedmf::pki {

// Signs `statement` with the PEM private key (the ECDSA P-256 keys common/pki
// issues; SHA-256). The signature is DER, at most 72 bytes for P-256.
absl::StatusOr<std::vector<uint8_t>> SignWithCertificateKey(const std::string& key_pem,
                                                            std::span<const uint8_t> statement);

// The identity in `cert_pem` if the certificate chains to `ca_pem`, is valid
// now, has role `role`, and its public key verified `signature` over
// `statement`; kUnauthenticated (with the reason) otherwise.
absl::StatusOr<PeerIdentity> VerifyCertificateSignature(const std::string& cert_pem,
                                                        const std::string& ca_pem, Role role,
                                                        std::span<const uint8_t> statement,
                                                        std::span<const uint8_t> signature);

}  // namespace fedmf::pki

#endif  // FEDMF_COMMON_PKI_CERTIFICATE_SIGNATURE_H_
