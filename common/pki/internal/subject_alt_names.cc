#include "common/pki/internal/subject_alt_names.h"

#include <arpa/inet.h>
#include <openssl/err.h>

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"

namespace fedmf::pki::internal {
namespace {

// Hostnames as they appear in SANs. Underscores are tolerated because
// container runtimes hand them out as service names; a numeric last label is
// refused because it is almost always a mistyped IP address.
absl::Status ValidateDnsName(absl::string_view dns) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", dns, "' is neither an IP address nor a valid DNS name: ", why));
  };
  if (dns.empty() || dns.size() > 253) return bad("must be 1-253 characters");
  absl::string_view last;
  for (absl::string_view label : absl::StrSplit(dns, '.')) {
    if (label.empty() || label.size() > 63) {
      return bad("each dot-separated label must be 1-63 characters");
    }
    for (const char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
        return bad("labels may contain only letters, digits, '-' and '_'");
      }
    }
    if (label.front() == '-' || label.back() == '-') {
      return bad("labels must not start or end with '-'");
    }
    last = label;
  }
  bool all_digits = true;
  for (const char c : last) {
    all_digits = all_digits && absl::ascii_isdigit(static_cast<unsigned char>(c));
  }
  if (all_digits) return bad("the last label is numeric");
  return absl::OkStatus();
}

bool LooksLikeIp(absl::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != '.' && c != ':') {
      return false;
    }
  }
  return true;
}

std::string AsnString(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

}  // namespace

std::string SanEntry::Key() const {
  return is_ip ? absl::StrCat("ip:", value) : absl::StrCat("dns:", absl::AsciiStrToLower(value));
}

std::string SanEntry::ToString() const {
  if (!is_ip) return absl::StrCat("DNS:", value);
  char text[INET6_ADDRSTRLEN] = {0};
  const int family = value.size() == 4 ? AF_INET : AF_INET6;
  if ((value.size() == 4 || value.size() == 16) &&
      ::inet_ntop(family, value.data(), text, sizeof(text)) != nullptr) {
    return absl::StrCat("IP:", text);
  }
  return absl::StrCat("IP:(", value.size(), " bytes)");
}

absl::StatusOr<std::vector<SanEntry>> BuildSanEntries(const std::string& name,
                                                      const std::vector<std::string>& extra) {
  std::vector<SanEntry> out;
  std::set<std::string> seen;
  const auto add = [&](SanEntry e) {
    if (seen.insert(e.Key()).second) out.push_back(std::move(e));
  };
  add({false, name});
  for (const std::string& entry : extra) {
    if (LooksLikeIp(entry)) {
      Asn1OctetStringPtr ip(a2i_IPADDRESS(entry.c_str()));
      ERR_clear_error();  // A failed parse only means "not an IP".
      if (ip) {
        add({true, AsnString(ip.get())});
        continue;
      }
    }
    RETURN_IF_ERROR(ValidateDnsName(entry));
    add({false, entry});
  }
  return out;
}

absl::StatusOr<GeneralNamesPtr> ToGeneralNames(const std::vector<SanEntry>& sans) {
  GeneralNamesPtr names(GENERAL_NAMES_new());
  if (!names) return OpensslError("GENERAL_NAMES_new failed");
  for (const SanEntry& san : sans) {
    GeneralNamePtr gn(GENERAL_NAME_new());
    ASN1_STRING* value = ASN1_STRING_type_new(san.is_ip ? V_ASN1_OCTET_STRING : V_ASN1_IA5STRING);
    if (!gn || value == nullptr ||
        ASN1_STRING_set(value, san.value.data(), static_cast<int>(san.value.size())) != 1) {
      ASN1_STRING_free(value);
      return OpensslError("cannot build subjectAltName");
    }
    // Takes ownership of `value`.
    GENERAL_NAME_set0_value(gn.get(), san.is_ip ? GEN_IPADD : GEN_DNS, value);
    if (sk_GENERAL_NAME_push(names.get(), gn.get()) <= 0) {
      return OpensslError("cannot build subjectAltName");
    }
    gn.release();  // Now owned by `names`.
  }
  return names;
}

absl::StatusOr<std::vector<SanEntry>> FromGeneralNames(const GENERAL_NAMES* names) {
  std::vector<SanEntry> out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names, i);
    if (gn->type == GEN_DNS) {
      out.push_back({false, AsnString(gn->d.dNSName)});
    } else if (gn->type == GEN_IPADD && (ASN1_STRING_length(gn->d.iPAddress) == 4 ||
                                         ASN1_STRING_length(gn->d.iPAddress) == 16)) {
      out.push_back({true, AsnString(gn->d.iPAddress)});
    } else {
      return absl::InvalidArgumentError(
          "a subjectAltName entry that is neither a DNS name nor an IP address "
          "(fedmf certificates carry only those)");
    }
  }
  return out;
}

}  // namespace fedmf::pki::internal
