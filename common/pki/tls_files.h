// The PEM material a daemon needs for mutual TLS, as written by
// `fedmf ca issue` (ca.h): dir/ca.crt, dir/<name>.crt, dir/<name>.key.
#ifndef FEDMF_COMMON_PKI_TLS_FILES_H_
#define FEDMF_COMMON_PKI_TLS_FILES_H_

#include <string>

#include "absl/status/statusor.h"

namespace fedmf::pki {

struct TlsFiles {
  std::string ca_cert_pem;  // Federation CA: the only trust anchor.
  std::string cert_pem;     // This daemon's certificate.
  std::string key_pem;      // Its private key.
};

// Reads and sanity-checks the three files so that misconfiguration fails at
// startup with a clear message instead of as an opaque TLS handshake error:
// the key must match the certificate, and the certificate must chain to
// ca.crt and be currently valid. A missing file is NotFound naming it and the
// command that creates it.
absl::StatusOr<TlsFiles> LoadTlsFiles(const std::string& dir, const std::string& name);

}  // namespace fedmf::pki

#endif  // FEDMF_COMMON_PKI_TLS_FILES_H_
