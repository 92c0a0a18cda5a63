#include "common/pki/identity.h"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/base/status_macros.h"
#include "common/pki/ca.h"
#include "common/pki/internal/openssl_helpers.h"

namespace fedmf::pki {
namespace {

using internal::OpensslError;
using internal::X509Ptr;

// The single entry for `nid` in the subject. Exactly one is required: with two
// CNs, which one "is" the peer would depend on the reader.
absl::StatusOr<std::string> SingleSubjectEntry(X509* cert, int nid, absl::string_view label) {
  const X509_NAME* subject = X509_get_subject_name(cert);
  const int idx = X509_NAME_get_index_by_NID(subject, nid, -1);
  if (idx < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("certificate subject has no ", label, "; was it issued by `fedmf ca issue`?"));
  }
  if (X509_NAME_get_index_by_NID(subject, nid, idx) >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("certificate subject has more than one ", label));
  }
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, idx));
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, data);
  internal::OsslStringPtr owned(utf8);
  if (len < 0) {
    return OpensslError(absl::StrCat("certificate ", label, " is not a string"),
                        absl::StatusCode::kInvalidArgument);
  }
  return std::string(reinterpret_cast<const char*>(utf8), static_cast<size_t>(len));
}

absl::Status Verify(const std::string& cert_pem, const std::string& ca_pem, const absl::Time* at) {
  ERR_clear_error();
  ASSIGN_OR_RETURN(X509Ptr cert, internal::ParseCertificatePem(cert_pem, "certificate"));
  ASSIGN_OR_RETURN(X509Ptr ca, internal::ParseCertificatePem(ca_pem, "CA certificate"));

  internal::X509StorePtr store(X509_STORE_new());
  if (!store || X509_STORE_add_cert(store.get(), ca.get()) != 1) {
    return OpensslError("cannot build trust store");
  }
  internal::X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
    return OpensslError("cannot initialise verification");
  }
  // Strict RFC 5280 checks: our own certificates satisfy them, so a failure
  // means the certificate came from somewhere else.
  X509_STORE_CTX_set_flags(ctx.get(), X509_V_FLAG_X509_STRICT);
  if (at != nullptr) X509_STORE_CTX_set_time(ctx.get(), 0, absl::ToTimeT(*at));
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return absl::UnauthenticatedError(
        absl::StrCat("certificate does not verify against the federation CA: ",
                     X509_verify_cert_error_string(err)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PeerIdentity> IdentityFromCertificatePem(const std::string& pem) {
  ERR_clear_error();
  ASSIGN_OR_RETURN(X509Ptr cert, internal::ParseCertificatePem(pem, "peer certificate"));
  ASSIGN_OR_RETURN(std::string cn, SingleSubjectEntry(cert.get(), NID_commonName, "CN (name)"));
  // Re-check the naming rule: names end up in logs, file paths and database
  // keys, so only what `fedmf ca issue` could have produced is accepted.
  if (absl::Status s = ValidateName(cn); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("peer certificate CN: ", s.message()));
  }
  absl::StatusOr<std::string> ou =
      SingleSubjectEntry(cert.get(), NID_organizationalUnitName, "OU (role)");
  if (!ou.ok()) return ou.status();
  absl::StatusOr<Role> role = RoleFromString(*ou);
  if (!role.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("peer certificate OU: ", role.status().message()));
  }
  return PeerIdentity{std::move(cn), *role};
}

absl::Status VerifyCertificate(const std::string& cert_pem, const std::string& ca_pem) {
  return Verify(cert_pem, ca_pem, nullptr);
}

absl::Status VerifyCertificate(const std::string& cert_pem, const std::string& ca_pem,
                               absl::Time at) {
  return Verify(cert_pem, ca_pem, &at);
}

absl::StatusOr<absl::Time> CertificateNotAfter(const std::string& pem) {
  ERR_clear_error();
  ASSIGN_OR_RETURN(X509Ptr cert, internal::ParseCertificatePem(pem, "certificate"));
  return internal::Asn1TimeToAbsl(X509_get0_notAfter(cert.get()));
}

absl::StatusOr<std::string> CertificateFingerprint(const std::string& pem) {
  ASSIGN_OR_RETURN(internal::X509Ptr cert, internal::ParseCertificatePem(pem, "certificate"));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (X509_digest(cert.get(), EVP_sha256(), digest, &len) != 1) {
    return internal::OpensslError("cannot hash the certificate");
  }
  return absl::StrCat("sha256:", absl::BytesToHexString(absl::string_view(
                                     reinterpret_cast<const char*>(digest), len)));
}

}  // namespace fedmf::pki
