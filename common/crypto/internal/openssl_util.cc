#include "common/crypto/internal/openssl_util.h"

#include <openssl/err.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace fedmf::crypto::internal {

absl::Status OpenSslError(absl::StatusCode code, absl::string_view what) {
  std::string detail;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    absl::StrAppend(&detail, detail.empty() ? "" : "; ", buf);
  }
  if (detail.empty()) return absl::Status(code, what);
  return absl::Status(code, absl::StrCat(what, " (", detail, ")"));
}

}  // namespace fedmf::crypto::internal
