// Private to common/pki: subjectAltName entries as fedmf certificates and
// certificate requests carry them (DNS names and IP addresses only), built as
// GENERAL_NAMEs rather than through OpenSSL's config-string syntax, so a
// hostile entry (e.g. "x,IP:1.2.3.4") cannot smuggle in extra names.
#ifndef FEDMF_COMMON_PKI_INTERNAL_SUBJECT_ALT_NAMES_H_
#define FEDMF_COMMON_PKI_INTERNAL_SUBJECT_ALT_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/pki/internal/openssl_helpers.h"

namespace fedmf::pki::internal {

// One subjectAltName entry, already parsed and validated.
struct SanEntry {
  bool is_ip = false;
  std::string value;  // DNS name, or the raw 4/16 address bytes.

  // "ip:<bytes>" or "dns:<lower-case name>": equal keys name the same entry.
  std::string Key() const;
  // "DNS:name" / "IP:1.2.3.4", for messages.
  std::string ToString() const;
};

// DNS:<name> first, then each entry of `extra` (IPv4/IPv6 literals become IP
// entries, anything else must be a valid DNS name), without duplicates.
absl::StatusOr<std::vector<SanEntry>> BuildSanEntries(const std::string& name,
                                                      const std::vector<std::string>& extra);

absl::StatusOr<GeneralNamesPtr> ToGeneralNames(const std::vector<SanEntry>& sans);

// The entries of `names`; InvalidArgument for any entry that is neither a DNS
// name nor a 4- or 16-byte IP address (e-mail, URI, directory name, ...).
absl::StatusOr<std::vector<SanEntry>> FromGeneralNames(const GENERAL_NAMES* names);

}  // namespace fedmf::pki::internal

#endif  // FEDMF_COMMON_PKI_INTERNAL_SUBJECT_ALT_NAMES_H_
