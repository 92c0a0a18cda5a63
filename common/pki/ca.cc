#include "common/pki/ca.h"

#include <openssl/err.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <cctype>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/base/status_macros.h"
#include "common/pki/certificate_request.h"
#include "common/pki/internal/openssl_helpers.h"
#include "common/pki/internal/subject_alt_names.h"

namespace fedmf::pki {
namespace {

using internal::Asn1IntegerPtr;
using internal::BignumPtr;
using internal::EvpPkeyPtr;
using internal::GeneralNamesPtr;
using internal::OpensslError;
using internal::X509ExtensionPtr;
using internal::X509Ptr;

constexpr mode_t kCertMode = 0644;
// Directories we create hold private keys.
constexpr mode_t kDirMode = 0700;
constexpr size_t kMaxNameLength = 64;
// Subject CN is at most 64 characters and the CA's is "<federation> CA".
constexpr size_t kMaxFederationNameLength = 61;
// Certificates start slightly in the past so a peer whose clock lags ours by a
// few minutes does not reject a freshly issued certificate as "not yet valid".
constexpr absl::Duration kBackdate = absl::Minutes(5);
// Far beyond any sane use, but keeps the arithmetic well away from overflow.
constexpr absl::Duration kMaxValidity = absl::Hours(24 * 366 * 100);

std::string PathIn(const std::string& dir, absl::string_view file) {
  return absl::StrCat(dir, "/", file);
}

std::string FormatUtc(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

absl::Status ValidateValidity(absl::Duration validity) {
  if (validity <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("validity must be positive (got ",
                                                   absl::FormatDuration(validity),
                                                   "): the certificate would already be expired"));
  }
  if (validity > kMaxValidity) {
    return absl::InvalidArgumentError(absl::StrCat("validity ", absl::FormatDuration(validity),
                                                   " is longer than the 100-year maximum"));
  }
  return absl::OkStatus();
}

absl::Status ValidateFederationName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxFederationNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("federation name must be 1-",
                                                   kMaxFederationNameLength, " characters (got ",
                                                   name.size(), ")"));
  }
  for (const char c : name) {
    if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError("federation name must be printable ASCII");
    }
  }
  if (name.front() == ' ' || name.back() == ' ') {
    return absl::InvalidArgumentError("federation name must not start or end with a space");
  }
  return absl::OkStatus();
}

using internal::SanEntry;

absl::Status AddSubjectAltNames(X509* cert, const std::vector<SanEntry>& sans) {
  ASSIGN_OR_RETURN(GeneralNamesPtr names, internal::ToGeneralNames(sans));
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return OpensslError("cannot add subjectAltName");
  }
  return absl::OkStatus();
}

// An extension from OpenSSL's config syntax; only ever called with constant
// strings (never user input).
absl::Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509ExtensionPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpensslError(absl::StrCat("cannot add extension ", OBJ_nid2sn(nid), "=", value));
  }
  return absl::OkStatus();
}

// 128 random bits: serials must be unique per CA, and unpredictable serials
// are the standard defence against chosen-prefix collision attacks.
absl::StatusOr<Asn1IntegerPtr> RandomSerial() {
  unsigned char bytes[16];
  BignumPtr bn;
  do {
    if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
      return OpensslError("RAND_bytes failed");
    }
    bn.reset(BN_bin2bn(bytes, sizeof(bytes), nullptr));
    if (!bn) return OpensslError("BN_bin2bn failed");
  } while (BN_is_zero(bn.get()));  // RFC 5280: serials are positive.
  Asn1IntegerPtr serial(BN_to_ASN1_INTEGER(bn.get(), nullptr));
  if (!serial) return OpensslError("BN_to_ASN1_INTEGER failed");
  return serial;
}

absl::Status AddNameEntry(X509_NAME* name, const char* field, absl::string_view value) {
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.data()),
                                 static_cast<int>(value.size()), -1, 0) != 1) {
    return OpensslError(absl::StrCat("cannot set subject ", field));
  }
  return absl::OkStatus();
}

// A v3 certificate with serial, validity, subject key and subject name set;
// the caller adds the issuer, extensions and signature.
absl::StatusOr<X509Ptr> NewCertificate(
    EVP_PKEY* key, absl::Time not_after,
    const std::vector<std::pair<const char*, std::string>>& subject) {
  X509Ptr cert(X509_new());
  if (!cert) return OpensslError("X509_new failed");
  ASSIGN_OR_RETURN(Asn1IntegerPtr serial, RandomSerial());
  const absl::Time not_before = absl::Now() - kBackdate;
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      X509_set_serialNumber(cert.get(), serial.get()) != 1 ||
      ASN1_TIME_set(X509_getm_notBefore(cert.get()), absl::ToTimeT(not_before)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), absl::ToTimeT(not_after)) == nullptr ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpensslError("cannot fill in certificate fields");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& [field, value] : subject) {
    RETURN_IF_ERROR(AddNameEntry(name, field, value));
  }
  return cert;
}

absl::Status Sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) <= 0) {
    return OpensslError("cannot sign certificate");
  }
  return absl::OkStatus();
}

absl::Status RefuseExisting(const std::string& path, absl::string_view hint) {
  if (internal::FileExists(path)) {
    return absl::AlreadyExistsError(absl::StrCat(path, " already exists; ", hint));
  }
  return absl::OkStatus();
}

struct LoadedCa {
  std::string cert_pem;  // Exact bytes of ca.crt, copied verbatim.
  X509Ptr cert;
  EvpPkeyPtr key;
};

absl::StatusOr<LoadedCa> LoadCa(const std::string& ca_dir) {
  const std::string cert_path = PathIn(ca_dir, "ca.crt");
  const std::string key_path = PathIn(ca_dir, "ca.key");
  const auto with_hint = [&](const absl::Status& s) {
    if (!absl::IsNotFound(s)) return s;
    return absl::NotFoundError(
        absl::StrCat(s.message(), "; is ", ca_dir,
                     " the federation CA directory? create one with: fedmf ca init"));
  };
  LoadedCa ca;
  absl::StatusOr<std::string> cert_pem = internal::ReadSmallFile(cert_path);
  if (!cert_pem.ok()) return with_hint(cert_pem.status());
  absl::StatusOr<std::string> key_pem = internal::ReadSmallFile(key_path);
  if (!key_pem.ok()) return with_hint(key_pem.status());
  absl::StatusOr<X509Ptr> cert = internal::ParseCertificatePem(*cert_pem, cert_path);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<EvpPkeyPtr> key = internal::ParsePrivateKeyPem(*key_pem, key_path);
  if (!key.ok()) return key.status();
  if (X509_check_ca(cert->get()) < 1) {
    return absl::FailedPreconditionError(absl::StrCat(cert_path, " is not a CA certificate"));
  }
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    return OpensslError(absl::StrCat(key_path, " does not belong to ", cert_path),
                        absl::StatusCode::kFailedPrecondition);
  }
  ca.cert_pem = *std::move(cert_pem);
  ca.cert = *std::move(cert);
  ca.key = *std::move(key);
  return ca;
}

// out_dir/ca.crt, if present, must be the same CA: a daemon trusting a
// different root than the one that signed its certificate fails every
// handshake with an unhelpful TLS error.
absl::Status CheckSameCa(const std::string& path, X509* ca_cert) {
  ASSIGN_OR_RETURN(std::string pem, internal::ReadSmallFile(path));
  ASSIGN_OR_RETURN(X509Ptr existing, internal::ParseCertificatePem(pem, path));
  if (X509_cmp(existing.get(), ca_cert) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path,
                     " holds a different CA certificate than the issuing CA; "
                     "use a separate output directory per federation"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateName(std::string_view name_in) {
  const absl::string_view name(name_in.data(), name_in.size());
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid name '", name, "': ", why,
                     " (names are 1-64 characters of a-z, 0-9, '.', '_' and '-', "
                     "starting with a letter or digit)"));
  };
  if (name.empty() || name.size() > kMaxNameLength) {
    return bad(absl::StrCat("length is ", name.size()));
  }
  if (!absl::ascii_islower(static_cast<unsigned char>(name.front())) &&
      !absl::ascii_isdigit(static_cast<unsigned char>(name.front()))) {
    return bad("must start with a lower-case letter or digit");
  }
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!absl::ascii_islower(u) && !absl::ascii_isdigit(u) && c != '.' && c != '_' && c != '-') {
      return bad(absl::StrCat("character '", absl::CEscape(std::string(1, c)), "' is not allowed"));
    }
  }
  return absl::OkStatus();
}

absl::Status InitCa(const std::string& dir, const std::string& federation_name,
                    absl::Duration validity) {
  ERR_clear_error();
  RETURN_IF_ERROR(ValidateFederationName(federation_name));
  RETURN_IF_ERROR(ValidateValidity(validity));
  RETURN_IF_ERROR(internal::EnsureDirectory(dir, kDirMode));

  const std::string key_path = PathIn(dir, "ca.key");
  const std::string cert_path = PathIn(dir, "ca.crt");
  constexpr absl::string_view kHint =
      "refusing to overwrite an existing federation CA (every certificate it "
      "issued would stop working)";
  RETURN_IF_ERROR(RefuseExisting(key_path, kHint));
  RETURN_IF_ERROR(RefuseExisting(cert_path, kHint));

  ASSIGN_OR_RETURN(EvpPkeyPtr key, internal::GenerateP256Key());
  absl::StatusOr<X509Ptr> cert = NewCertificate(key.get(), absl::Now() + validity,
                                                {{"CN", absl::StrCat(federation_name, " CA")}});
  if (!cert.ok()) return cert.status();
  X509* x = cert->get();
  if (X509_set_issuer_name(x, X509_get_subject_name(x)) != 1) {
    return OpensslError("cannot set issuer");
  }
  // pathlen:0 because this CA only ever signs leaves; an intermediate CA
  // certificate would be a mis-issuance we want verifiers to reject.
  for (const auto& [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                   std::pair{NID_key_usage, "critical,keyCertSign,cRLSign"},
                                   std::pair{NID_subject_key_identifier, "hash"},
                                   std::pair{NID_authority_key_identifier, "keyid:always"}}) {
    RETURN_IF_ERROR(AddExtension(x, x, nid, value));
  }
  RETURN_IF_ERROR(Sign(x, key.get()));

  ASSIGN_OR_RETURN(std::string key_pem, internal::PrivateKeyToPem(key.get()));
  ASSIGN_OR_RETURN(std::string cert_pem, internal::CertificateToPem(x));
  if (absl::Status s = internal::WriteKeyAndPublicFile(key_path, key_pem, cert_path, cert_pem);
      !s.ok()) {
    return absl::IsAlreadyExists(s)
               ? absl::AlreadyExistsError(absl::StrCat(s.message(), "; ", kHint))
               : s;
  }
  return absl::OkStatus();
}

namespace {

// Signs a leaf certificate for `subject_key` and writes out_dir/<name>.crt,
// plus out_dir/<name>.key when `key_pem` is given (ca issue: the CA made the
// key) and a copy of ca.crt unless it is there. Nothing in the certificate
// comes from elsewhere than the arguments: a request's extensions are never
// copied.
absl::Status IssueLeaf(const std::string& ca_dir, const std::string& out_dir,
                       const std::string& name, Role role, const std::vector<SanEntry>& sans,
                       absl::Duration validity, EVP_PKEY* subject_key, const std::string* key_pem) {
  ASSIGN_OR_RETURN(LoadedCa ca, LoadCa(ca_dir));
  const absl::Time now = absl::Now();
  const absl::Time not_after = now + validity;
  absl::StatusOr<absl::Time> ca_not_after =
      internal::Asn1TimeToAbsl(X509_get0_notAfter(ca.cert.get()));
  if (!ca_not_after.ok()) return ca_not_after.status();
  if (*ca_not_after <= now) {
    return absl::FailedPreconditionError(
        absl::StrCat("the federation CA in ", ca_dir, " expired on ", FormatUtc(*ca_not_after),
                     "; create a new CA and re-issue every certificate"));
  }
  // A certificate outliving its CA would silently stop verifying early.
  if (not_after > *ca_not_after) {
    return absl::FailedPreconditionError(absl::StrCat(
        "requested validity ends ", FormatUtc(not_after), ", after the federation CA expires (",
        FormatUtc(*ca_not_after), "); use a shorter validity"));
  }

  if (absl::Status s = internal::EnsureDirectory(out_dir, kDirMode); !s.ok()) {
    return s;
  }
  const std::string key_path = PathIn(out_dir, absl::StrCat(name, ".key"));
  const std::string cert_path = PathIn(out_dir, absl::StrCat(name, ".crt"));
  const std::string ca_copy_path = PathIn(out_dir, "ca.crt");
  const std::string hint = key_pem != nullptr
                               ? absl::StrCat("refusing to overwrite; to re-issue '", name,
                                              "', delete ", key_path, " and ", cert_path, " first")
                               : absl::StrCat("refusing to overwrite; to sign again for '", name,
                                              "', delete ", cert_path, " first");
  if (key_pem != nullptr) RETURN_IF_ERROR(RefuseExisting(key_path, hint));
  RETURN_IF_ERROR(RefuseExisting(cert_path, hint));
  const bool have_ca_copy = internal::FileExists(ca_copy_path);
  if (have_ca_copy) {
    if (absl::Status s = CheckSameCa(ca_copy_path, ca.cert.get()); !s.ok()) {
      return s;
    }
  }

  absl::StatusOr<X509Ptr> cert =
      NewCertificate(subject_key, not_after, {{"CN", name}, {"OU", RoleToString(role)}});
  if (!cert.ok()) return cert.status();
  X509* x = cert->get();
  if (X509_set_issuer_name(x, X509_get_subject_name(ca.cert.get())) != 1) {
    return OpensslError("cannot set issuer");
  }
  // Every daemon is both a TLS server and a TLS client (parties dial out, the
  // server also accepts), hence both EKUs on every certificate.
  for (const auto& [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                                   std::pair{NID_key_usage, "critical,digitalSignature"},
                                   std::pair{NID_ext_key_usage, "serverAuth,clientAuth"},
                                   std::pair{NID_subject_key_identifier, "hash"},
                                   std::pair{NID_authority_key_identifier, "keyid:always"}}) {
    if (absl::Status s = AddExtension(x, ca.cert.get(), nid, value); !s.ok()) {
      return s;
    }
  }
  RETURN_IF_ERROR(AddSubjectAltNames(x, sans));
  RETURN_IF_ERROR(Sign(x, ca.key.get()));

  ASSIGN_OR_RETURN(std::string cert_pem, internal::CertificateToPem(x));
  absl::Status written =
      key_pem != nullptr ? internal::WriteKeyAndPublicFile(key_path, *key_pem, cert_path, cert_pem)
                         : internal::WriteNewFileAtomically(cert_path, cert_pem, kCertMode);
  if (!written.ok()) {
    return absl::IsAlreadyExists(written)
               ? absl::AlreadyExistsError(absl::StrCat(written.message(), "; ", hint))
               : written;
  }
  if (!have_ca_copy) {
    absl::Status s = internal::WriteNewFileAtomically(ca_copy_path, ca.cert_pem, kCertMode);
    // Lost a race with a concurrent issue into the same directory: fine as
    // long as it copied the same CA.
    if (absl::IsAlreadyExists(s)) s = CheckSameCa(ca_copy_path, ca.cert.get());
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status IssueCertificate(const std::string& ca_dir, const std::string& out_dir,
                              const std::string& name, Role role,
                              const std::vector<std::string>& dns_names_or_ips,
                              absl::Duration validity) {
  ERR_clear_error();
  // Validate everything the caller gave us before touching the disk.
  RETURN_IF_ERROR(ValidateName(name));
  RETURN_IF_ERROR(ValidateValidity(validity));
  ASSIGN_OR_RETURN(std::vector<SanEntry> sans, internal::BuildSanEntries(name, dns_names_or_ips));
  ASSIGN_OR_RETURN(EvpPkeyPtr key, internal::GenerateP256Key());
  ASSIGN_OR_RETURN(std::string key_pem, internal::PrivateKeyToPem(key.get()));
  return IssueLeaf(ca_dir, out_dir, name, role, sans, validity, key.get(), &key_pem);
}

absl::StatusOr<CertificateRequestInfo> SignCertificateRequest(
    const std::string& ca_dir, const std::string& csr_path, const std::string& out_dir,
    const CertificateRequestExpectation& expected, absl::Duration validity) {
  ERR_clear_error();
  RETURN_IF_ERROR(ValidateName(expected.name));
  RETURN_IF_ERROR(ValidateValidity(validity));
  ASSIGN_OR_RETURN(std::vector<SanEntry> sans,
                   internal::BuildSanEntries(expected.name, expected.sans));
  ASSIGN_OR_RETURN(std::string csr_pem, internal::ReadSmallFile(csr_path));
  ASSIGN_OR_RETURN(CertificateRequestInfo info,
                   CheckCertificateRequest(csr_pem, csr_path, expected));
  ASSIGN_OR_RETURN(internal::X509ReqPtr req,
                   internal::ParseCertificateRequestPem(csr_pem, csr_path));
  EVP_PKEY* subject_key = X509_REQ_get0_pubkey(req.get());
  if (subject_key == nullptr) return OpensslError(absl::StrCat(csr_path, ": no public key"));
  RETURN_IF_ERROR(IssueLeaf(ca_dir, out_dir, expected.name, expected.role, sans, validity,
                            subject_key, /*key_pem=*/nullptr));
  return info;
}

}  // namespace fedmf::pki
