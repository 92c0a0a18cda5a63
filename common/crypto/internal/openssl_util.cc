#include "common/crypto/internal/openssl_util.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
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

namespace {

// What a fetch returned, or the process ends: without these OpenSSL's default
// provider is broken and nothing here can run safely.
template <typename T>
const T* FetchedOrAbort(T* fetched, const char* name) {
  if (fetched == nullptr) {
    std::fprintf(stderr, "fedmf: fatal: OpenSSL has no %s\n", name);
    std::abort();
  }
  return fetched;
}

}  // namespace

const EVP_CIPHER* Aes256GcmCipher() {
  static const EVP_CIPHER* const cipher =
      FetchedOrAbort(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr), "AES-256-GCM");
  return cipher;
}

const EVP_MD* Sha256Digest() {
  static const EVP_MD* const md =
      FetchedOrAbort(EVP_MD_fetch(nullptr, "SHA256", nullptr), "SHA-256");
  return md;
}

}  // namespace fedmf::crypto::internal
