#include "common/pki/certificate_request.h"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/pki/ca.h"
#include "common/pki/internal/openssl_helpers.h"
#include "common/pki/internal/subject_alt_names.h"

namespace fedmf::pki {
namespace {

using internal::EvpPkeyPtr;
using internal::GeneralNamesPtr;
using internal::OpensslError;
using internal::SanEntry;

struct ExtensionsFree {
  void operator()(STACK_OF(X509_EXTENSION) * p) const {
    sk_X509_EXTENSION_pop_free(p, X509_EXTENSION_free);
  }
};
using ExtensionsPtr = std::unique_ptr<STACK_OF(X509_EXTENSION), ExtensionsFree>;
using EvpPkeyCtxPtr = internal::OsslPtr<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;
using BasicConstraintsPtr = internal::OsslPtr<BASIC_CONSTRAINTS, BASIC_CONSTRAINTS_free>;

// Text from the request as it goes into a message: escaped (a request may
// carry terminal control sequences) and at most 80 characters.
std::string Shown(absl::string_view text) {
  std::string out = absl::CHexEscape(text.substr(0, 80));
  if (text.size() > 80) out += "...";
  return out;
}

std::string PathIn(const std::string& dir, absl::string_view file) {
  return absl::StrCat(dir, "/", file);
}

std::vector<std::string> SanStrings(const std::vector<SanEntry>& sans) {
  std::vector<std::string> out;
  out.reserve(sans.size());
  for (const SanEntry& san : sans) out.push_back(san.ToString());
  return out;
}

std::string RequestCommand(const CertificateRequestExpectation& e) {
  return absl::StrCat("fedmf ca request --name ", e.name, " --role ", RoleToString(e.role));
}

// ECDSA P-256, like every key of the federation (and a point on the curve).
absl::Status CheckKey(EVP_PKEY* key, const std::string& label,
                      const CertificateRequestExpectation& expected) {
  char group[64] = {0};
  size_t group_len = 0;
  const bool p256 = EVP_PKEY_is_a(key, "EC") == 1 &&
                    EVP_PKEY_get_group_name(key, group, sizeof(group), &group_len) == 1 &&
                    std::string(group, group_len) == "prime256v1";
  ERR_clear_error();
  if (!p256) {
    const char* type = EVP_PKEY_get0_type_name(key);
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing ", label, ": its key is ", type != nullptr ? type : "of an unknown type", " (",
        EVP_PKEY_get_bits(key), " bits", group_len > 0 ? absl::StrCat(", ", group) : "",
        "), not ECDSA P-256 as every key of the federation; ask for a request made with: ",
        RequestCommand(expected)));
  }
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
  if (!ctx || EVP_PKEY_public_check(ctx.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat("refusing ", label, ": its public key is not a valid P-256 point"));
  }
  return absl::OkStatus();
}

// Exactly CN=<name>, OU=<role>: the identity every peer will read.
absl::Status CheckSubject(X509_REQ* req, const std::string& label,
                          const CertificateRequestExpectation& expected,
                          CertificateRequestInfo& info) {
  const X509_NAME* subject = X509_REQ_get_subject_name(req);
  std::vector<std::string> cn, ou;
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    unsigned char* utf8 = nullptr;
    const int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
    if (len < 0)
      return OpensslError(absl::StrCat(label, ": unreadable subject"),
                          absl::StatusCode::kInvalidArgument);
    internal::OsslStringPtr owned(utf8);
    std::string value(reinterpret_cast<const char*>(utf8), static_cast<size_t>(len));
    if (nid == NID_commonName) {
      cn.push_back(std::move(value));
    } else if (nid == NID_organizationalUnitName) {
      ou.push_back(std::move(value));
    } else {
      const char* sn = OBJ_nid2sn(nid);
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing ", label, ": its subject has a ", nid != NID_undef && sn ? sn : "non-standard",
          " entry; a federation certificate's subject is exactly CN=<name>, OU=<role> (ask for a "
          "request made with: ",
          RequestCommand(expected), ")"));
    }
  }
  if (cn.size() != 1 || ou.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing ", label, ": its subject has ", cn.size(), " CN and ", ou.size(),
        " OU entries, not one of each (ask for a request made with: ", RequestCommand(expected),
        ")"));
  }
  absl::StatusOr<Role> role = RoleFromString(ou[0]);
  if (cn[0] != expected.name || !role.ok() || *role != expected.role) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing ", label, ": it asks for '", Shown(cn[0]), "' (role ", Shown(ou[0]),
        "), but you mean to sign '", expected.name, "' (role ", RoleToString(expected.role),
        "); the name and role become the holder's identity in the federation. If the request "
        "comes from the partner you mean, ask it for one made with: ",
        RequestCommand(expected)));
  }
  info.name = cn[0];
  info.role = *role;
  return absl::OkStatus();
}

// Only subjectAltName (within what the operator intends) and
// basicConstraints CA:FALSE; every other extension is the CA's to decide.
absl::Status CheckExtensions(X509_REQ* req, const std::string& label,
                             const CertificateRequestExpectation& expected,
                             CertificateRequestInfo& info) {
  for (int i = 0; i < X509_REQ_get_attr_count(req); ++i) {
    const int nid = OBJ_obj2nid(X509_ATTRIBUTE_get0_object(X509_REQ_get_attr(req, i)));
    if (nid != NID_ext_req) {
      const char* sn = OBJ_nid2sn(nid);
      return absl::InvalidArgumentError(
          absl::StrCat("refusing ", label, ": it carries the attribute ",
                       nid != NID_undef && sn ? sn : "(unknown)",
                       "; a request carries only its requested extensions"));
    }
  }
  ASSIGN_OR_RETURN(std::vector<SanEntry> allowed,
                   internal::BuildSanEntries(expected.name, expected.sans));
  std::set<std::string> allowed_keys;
  for (const SanEntry& san : allowed) allowed_keys.insert(san.Key());

  ExtensionsPtr exts(X509_REQ_get_extensions(req));
  ERR_clear_error();  // No extensions at all is not an error.
  std::vector<SanEntry> requested;
  for (int i = 0; exts && i < sk_X509_EXTENSION_num(exts.get()); ++i) {
    X509_EXTENSION* ext = sk_X509_EXTENSION_value(exts.get(), i);
    const int nid = OBJ_obj2nid(X509_EXTENSION_get_object(ext));
    if (nid == NID_subject_alt_name) {
      GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(X509V3_EXT_d2i(ext)));
      if (!names) {
        return OpensslError(absl::StrCat("refusing ", label, ": malformed subjectAltName"),
                            absl::StatusCode::kInvalidArgument);
      }
      absl::StatusOr<std::vector<SanEntry>> sans = internal::FromGeneralNames(names.get());
      if (!sans.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("refusing ", label, ": it asks for ", sans.status().message()));
      }
      for (SanEntry& san : *sans) {
        if (!allowed_keys.contains(san.Key())) {
          return absl::InvalidArgumentError(absl::StrCat(
              "refusing ", label, ": it asks for the subjectAltName ", Shown(san.ToString()),
              ", which you do not intend (the certificate would carry ",
              absl::StrJoin(SanStrings(allowed), ", "),
              "); pass --san for every name the certificate must be valid for, or ask for a "
              "request without it"));
        }
        requested.push_back(std::move(san));
      }
    } else if (nid == NID_basic_constraints) {
      BasicConstraintsPtr bc(static_cast<BASIC_CONSTRAINTS*>(X509V3_EXT_d2i(ext)));
      if (!bc) {
        return OpensslError(absl::StrCat("refusing ", label, ": malformed basicConstraints"),
                            absl::StatusCode::kInvalidArgument);
      }
      if (bc->ca) {
        return absl::InvalidArgumentError(
            absl::StrCat("refusing ", label,
                         ": it asks to be a certificate authority (basicConstraints CA:TRUE); "
                         "the federation has one CA and its certificates are never CAs"));
      }
    } else {
      const char* sn = OBJ_nid2sn(nid);
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing ", label, ": it asks for the extension ",
          nid != NID_undef && sn ? sn : "(unknown)",
          "; the CA sets key usage and every other extension itself (ask for a request made "
          "with: ",
          RequestCommand(expected), ")"));
    }
  }
  info.sans = SanStrings(requested);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CertificateRequestInfo> CreateCertificateRequest(
    const std::string& out_dir, const std::string& name, Role role,
    const std::vector<std::string>& dns_names_or_ips) {
  ERR_clear_error();
  RETURN_IF_ERROR(ValidateName(name));
  ASSIGN_OR_RETURN(std::vector<SanEntry> sans, internal::BuildSanEntries(name, dns_names_or_ips));
  RETURN_IF_ERROR(internal::EnsureDirectory(out_dir, 0700));
  const std::string key_path = PathIn(out_dir, absl::StrCat(name, ".key"));
  const std::string csr_path = PathIn(out_dir, absl::StrCat(name, ".csr"));
  for (const std::string& path : {key_path, csr_path}) {
    if (internal::FileExists(path)) {
      return absl::AlreadyExistsError(
          absl::StrCat(path,
                       " already exists; refusing to overwrite (a key may already have a "
                       "certificate). To start over, delete ",
                       key_path, " and ", csr_path, " first"));
    }
  }

  ASSIGN_OR_RETURN(EvpPkeyPtr key, internal::GenerateP256Key());
  internal::X509ReqPtr req(X509_REQ_new());
  if (!req || X509_REQ_set_version(req.get(), X509_REQ_VERSION_1) != 1 ||
      X509_REQ_set_pubkey(req.get(), key.get()) != 1) {
    return OpensslError("cannot fill in the certificate request");
  }
  X509_NAME* subject = X509_REQ_get_subject_name(req.get());
  for (const auto& [field, value] :
       {std::pair<const char*, std::string>{"CN", name},
        std::pair<const char*, std::string>{"OU", RoleToString(role)}}) {
    if (X509_NAME_add_entry_by_txt(subject, field, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(value.data()),
                                   static_cast<int>(value.size()), -1, 0) != 1) {
      return OpensslError(absl::StrCat("cannot set subject ", field));
    }
  }
  ASSIGN_OR_RETURN(GeneralNamesPtr names, internal::ToGeneralNames(sans));
  ExtensionsPtr exts(sk_X509_EXTENSION_new_null());
  X509_EXTENSION* san = X509V3_EXT_i2d(NID_subject_alt_name, 0, names.get());
  if (!exts || san == nullptr || sk_X509_EXTENSION_push(exts.get(), san) <= 0) {
    X509_EXTENSION_free(san);
    return OpensslError("cannot build the requested subjectAltName");
  }
  if (X509_REQ_add_extensions(req.get(), exts.get()) != 1 ||
      X509_REQ_sign(req.get(), key.get(), EVP_sha256()) <= 0) {
    return OpensslError("cannot sign the certificate request");
  }
  ASSIGN_OR_RETURN(std::string key_pem, internal::PrivateKeyToPem(key.get()));
  ASSIGN_OR_RETURN(std::string csr_pem, internal::CertificateRequestToPem(req.get()));
  RETURN_IF_ERROR(internal::WriteKeyAndPublicFile(key_path, key_pem, csr_path, csr_pem));

  CertificateRequestInfo info{name, role, SanStrings(sans), ""};
  ASSIGN_OR_RETURN(info.key_fingerprint, internal::PublicKeyFingerprint(key.get()));
  return info;
}

absl::StatusOr<CertificateRequestInfo> CheckCertificateRequest(
    const std::string& csr_pem, const std::string& label,
    const CertificateRequestExpectation& expected) {
  ERR_clear_error();
  RETURN_IF_ERROR(ValidateName(expected.name));
  ASSIGN_OR_RETURN(internal::X509ReqPtr req, internal::ParseCertificateRequestPem(csr_pem, label));
  if (X509_REQ_get_version(req.get()) != X509_REQ_VERSION_1) {
    return absl::InvalidArgumentError(
        absl::StrCat("refusing ", label, ": not a PKCS#10 version 1 request"));
  }
  EVP_PKEY* key = X509_REQ_get0_pubkey(req.get());
  if (key == nullptr) {
    return OpensslError(absl::StrCat("refusing ", label, ": its public key is unreadable"),
                        absl::StatusCode::kInvalidArgument);
  }
  RETURN_IF_ERROR(CheckKey(key, label, expected));
  // Proof of possession: only the private key's holder can sign the request.
  if (X509_REQ_verify(req.get(), key) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing ", label,
        ": its signature does not verify under its own key (altered after it was made, or not "
        "made by the key's holder)"));
  }
  const int sig_nid = X509_REQ_get_signature_nid(req.get());
  if (sig_nid != NID_ecdsa_with_SHA256 && sig_nid != NID_ecdsa_with_SHA384 &&
      sig_nid != NID_ecdsa_with_SHA512) {
    return absl::InvalidArgumentError(
        absl::StrCat("refusing ", label, ": signed with ", OBJ_nid2sn(sig_nid),
                     "; only ECDSA with SHA-256/384/512 is accepted"));
  }
  CertificateRequestInfo info;
  RETURN_IF_ERROR(CheckSubject(req.get(), label, expected, info));
  RETURN_IF_ERROR(CheckExtensions(req.get(), label, expected, info));
  ASSIGN_OR_RETURN(info.key_fingerprint, internal::PublicKeyFingerprint(key));
  if (!expected.key_fingerprint.empty() && expected.key_fingerprint != info.key_fingerprint) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing ", label, ": its key's fingerprint is ", info.key_fingerprint, ", not ",
        expected.key_fingerprint,
        " as expected: this is not the request the partner made (or it read out another one)"));
  }
  return info;
}

}  // namespace fedmf::pki
