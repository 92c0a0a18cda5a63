// Private to common/pki: RAII owners for OpenSSL objects, OpenSSL error
// reporting, PEM parsing and crash-safe file writes. Not part of the API.
#ifndef FEDMF_COMMON_PKI_INTERNAL_OPENSSL_HELPERS_H_
#define FEDMF_COMMON_PKI_INTERNAL_OPENSSL_HELPERS_H_

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fedmf::pki::internal {

// unique_ptr deleter calling an OpenSSL free function, so every object has an
// owner and early returns on error paths cannot leak.
template <auto FreeFn>
struct OsslDeleter {
  template <typename T>
  void operator()(T* p) const {
    FreeFn(p);
  }
};
template <typename T, auto FreeFn>
using OsslPtr = std::unique_ptr<T, OsslDeleter<FreeFn>>;

using BioPtr = OsslPtr<BIO, BIO_free_all>;
using BignumPtr = OsslPtr<BIGNUM, BN_free>;
using Asn1IntegerPtr = OsslPtr<ASN1_INTEGER, ASN1_INTEGER_free>;
using Asn1OctetStringPtr = OsslPtr<ASN1_OCTET_STRING, ASN1_OCTET_STRING_free>;
using EvpPkeyPtr = OsslPtr<EVP_PKEY, EVP_PKEY_free>;
using GeneralNamePtr = OsslPtr<GENERAL_NAME, GENERAL_NAME_free>;
using GeneralNamesPtr = OsslPtr<GENERAL_NAMES, GENERAL_NAMES_free>;
using X509Ptr = OsslPtr<X509, X509_free>;
using X509ExtensionPtr = OsslPtr<X509_EXTENSION, X509_EXTENSION_free>;
using X509ReqPtr = OsslPtr<X509_REQ, X509_REQ_free>;
using X509StorePtr = OsslPtr<X509_STORE, X509_STORE_free>;
using X509StoreCtxPtr = OsslPtr<X509_STORE_CTX, X509_STORE_CTX_free>;

// OPENSSL_free is a macro, so it cannot be a template argument directly.
inline void OpensslFree(void* p) { OPENSSL_free(p); }
using OsslStringPtr = OsslPtr<unsigned char, OpensslFree>;

// `what` plus whatever OpenSSL queued on this thread's error stack (which is
// drained, so a later failure does not report a stale cause).
absl::Status OpensslError(absl::string_view what,
                          absl::StatusCode code = absl::StatusCode::kInternal);

// First certificate in `pem`; InvalidArgument naming `label` if there is none.
absl::StatusOr<X509Ptr> ParseCertificatePem(absl::string_view pem, absl::string_view label);
absl::StatusOr<EvpPkeyPtr> ParsePrivateKeyPem(absl::string_view pem, absl::string_view label);
absl::StatusOr<std::string> CertificateToPem(X509* cert);
absl::StatusOr<std::string> PrivateKeyToPem(EVP_PKEY* key);

// A PKCS#10 certificate request (PEM "CERTIFICATE REQUEST").
absl::StatusOr<X509ReqPtr> ParseCertificateRequestPem(absl::string_view pem,
                                                      absl::string_view label);
absl::StatusOr<std::string> CertificateRequestToPem(X509_REQ* req);

// The key every fedmf certificate carries: ECDSA P-256, from OpenSSL's CSPRNG.
absl::StatusOr<EvpPkeyPtr> GenerateP256Key();
// "sha256:<64 hex>" of the DER SubjectPublicKeyInfo: what two people compare
// (by phone, say) to know a request or certificate holds the key they mean.
absl::StatusOr<std::string> PublicKeyFingerprint(EVP_PKEY* key);

absl::StatusOr<absl::Time> Asn1TimeToAbsl(const ASN1_TIME* t);

// Whole file; NotFound (naming the path) if it does not exist. Refuses files
// over 1 MiB: nothing we read is legitimately that large.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path);
bool FileExists(const std::string& path);
// mkdir -p with `mode` for directories it creates.
absl::Status EnsureDirectory(const std::string& dir, mode_t mode);

// Writes `data` to a temp file in the same directory (created 0600, then
// chmod'ed to `mode`), fsyncs it, and moves it into place only if `path` does
// not exist yet (AlreadyExists otherwise). A crash therefore leaves either no
// file or the complete file, never a truncated key or certificate.
absl::Status WriteNewFileAtomically(const std::string& path, absl::string_view data, mode_t mode);

// Writes the private key (0600), then its public companion (certificate or
// request, 0644), each with WriteNewFileAtomically. If the companion cannot be
// written, the key just created is removed again so a retry starts clean.
absl::Status WriteKeyAndPublicFile(const std::string& key_path, absl::string_view key_pem,
                                   const std::string& public_path, absl::string_view public_pem);

}  // namespace fedmf::pki::internal

#endif  // FEDMF_COMMON_PKI_INTERNAL_OPENSSL_HELPERS_H_
