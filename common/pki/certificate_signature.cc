#include "common/pki/certificate_signature.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/pki/internal/openssl_helpers.h"

namespace fedmf::pki {
namespace {

using MdCtxPtr = internal::OsslPtr<EVP_MD_CTX, EVP_MD_CTX_free>;

}  // namespace

absl::StatusOr<std::vector<uint8_t>> SignWithCertificateKey(const std::string& key_pem,
                                                            std::span<const uint8_t> statement) {
  ASSIGN_OR_RETURN(internal::EvpPkeyPtr key, internal::ParsePrivateKeyPem(key_pem, "signing key"));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) return internal::OpensslError("EVP_MD_CTX_new");
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1) {
    return internal::OpensslError("EVP_DigestSignInit");
  }
  size_t len = 0;
  if (EVP_DigestSign(ctx.get(), nullptr, &len, statement.data(), statement.size()) != 1) {
    return internal::OpensslError("EVP_DigestSign (size)");
  }
  std::vector<uint8_t> sig(len);
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, statement.data(), statement.size()) != 1) {
    return internal::OpensslError("EVP_DigestSign");
  }
  sig.resize(len);
  return sig;
}

absl::StatusOr<PeerIdentity> VerifyCertificateSignature(const std::string& cert_pem,
                                                        const std::string& ca_pem, Role role,
                                                        std::span<const uint8_t> statement,
                                                        std::span<const uint8_t> signature) {
  if (absl::Status s = VerifyCertificate(cert_pem, ca_pem); !s.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("certificate does not chain to the federation CA: ", s.message()));
  }
  absl::StatusOr<PeerIdentity> id = IdentityFromCertificatePem(cert_pem);
  if (!id.ok()) return absl::UnauthenticatedError(id.status().message());
  if (id->role != role) {
    return absl::UnauthenticatedError(absl::StrCat("certificate of '", id->name, "' has role ",
                                                   RoleToString(id->role), ", expected ",
                                                   RoleToString(role)));
  }
  absl::StatusOr<internal::X509Ptr> cert = internal::ParseCertificatePem(cert_pem, "certificate");
  if (!cert.ok()) return absl::UnauthenticatedError(cert.status().message());
  EVP_PKEY* pub = X509_get0_pubkey(cert->get());  // owned by the certificate
  if (pub == nullptr) return internal::OpensslError("X509_get0_pubkey");
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) return internal::OpensslError("EVP_MD_CTX_new");
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pub) != 1) {
    return internal::OpensslError("EVP_DigestVerifyInit");
  }
  if (EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), statement.data(),
                       statement.size()) != 1) {
    ERR_clear_error();  // a bad signature is untrusted input, not an OpenSSL failure
    return absl::UnauthenticatedError(
        absl::StrCat("signature does not verify under the certificate of '", id->name, "'"));
  }
  return *id;
}

}  // namespace fedmf::pki
