#include "common/pki/tls_files.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/base/status_macros.h"
#include "common/pki/ca.h"
#include "common/pki/identity.h"
#include "common/pki/internal/openssl_helpers.h"

namespace fedmf::pki {
namespace {

std::string IssueCommand(absl::string_view name, absl::string_view role) {
  return absl::StrCat("fedmf ca issue --name ", name, " --role ", role);
}

}  // namespace

absl::StatusOr<TlsFiles> LoadTlsFiles(const std::string& dir, const std::string& name) {
  ERR_clear_error();
  RETURN_IF_ERROR(ValidateName(name));
  const std::string ca_path = absl::StrCat(dir, "/ca.crt");
  const std::string cert_path = absl::StrCat(dir, "/", name, ".crt");
  const std::string key_path = absl::StrCat(dir, "/", name, ".key");

  TlsFiles files;
  absl::StatusOr<std::string> cert = internal::ReadSmallFile(cert_path);
  if (!cert.ok()) {
    if (!absl::IsNotFound(cert.status())) return cert.status();
    return absl::NotFoundError(absl::StrCat("TLS certificate ", cert_path,
                                            " is missing; run: ", IssueCommand(name, "ROLE"),
                                            " and put its output in ", dir));
  }
  files.cert_pem = *std::move(cert);
  // The role is in the certificate, so later hints can give the exact command.
  absl::StatusOr<PeerIdentity> identity = IdentityFromCertificatePem(files.cert_pem);
  if (!identity.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(cert_path, ": ", identity.status().message()));
  }
  const std::string fix = absl::StrCat("run: ", IssueCommand(name, RoleToString(identity->role)));
  // A renamed file would otherwise make this daemon present someone else's
  // identity to its peers.
  if (identity->name != name) {
    return absl::FailedPreconditionError(
        absl::StrCat(cert_path, " was issued to '", identity->name, "', not '", name, "'"));
  }

  absl::StatusOr<std::string> key = internal::ReadSmallFile(key_path);
  if (!key.ok()) {
    if (!absl::IsNotFound(key.status())) return key.status();
    return absl::NotFoundError(absl::StrCat("TLS private key ", key_path, " is missing; ", fix));
  }
  files.key_pem = *std::move(key);

  absl::StatusOr<std::string> ca = internal::ReadSmallFile(ca_path);
  if (!ca.ok()) {
    if (!absl::IsNotFound(ca.status())) return ca.status();
    return absl::NotFoundError(absl::StrCat("federation CA certificate ", ca_path,
                                            " is missing; copy ca.crt from the CA directory, or ",
                                            fix, " (which copies it)"));
  }
  files.ca_cert_pem = *std::move(ca);

  ASSIGN_OR_RETURN(internal::X509Ptr x509,
                   internal::ParseCertificatePem(files.cert_pem, cert_path));
  ASSIGN_OR_RETURN(internal::EvpPkeyPtr pkey,
                   internal::ParsePrivateKeyPem(files.key_pem, key_path));
  if (X509_check_private_key(x509.get(), pkey.get()) != 1) {
    ERR_clear_error();
    return absl::FailedPreconditionError(
        absl::StrCat(key_path, " does not match ", cert_path, "; ", fix));
  }
  if (absl::Status s = VerifyCertificate(files.cert_pem, files.ca_cert_pem); !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(cert_path, " is not usable with ", ca_path, ": ", s.message(), "; ", fix));
  }
  return files;
}

}  // namespace fedmf::pki
