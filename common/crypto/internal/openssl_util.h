// Internal to common/crypto: turning OpenSSL failures into absl::Status.
#ifndef FEDMF_COMMON_CRYPTO_INTERNAL_OPENSSL_UTIL_H_
#define FEDMF_COMMON_CRYPTO_INTERNAL_OPENSSL_UTIL_H_

#include <openssl/types.h>

#include <cstddef>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fedmf::crypto::internal {

// Drains this thread's OpenSSL error queue into the message, so a failure here
// never shows up later as a stale error in an unrelated OpenSSL call.
absl::Status OpenSslError(absl::StatusCode code, absl::string_view what);
inline absl::Status OpenSslInternal(absl::string_view what) {
  return OpenSslError(absl::StatusCode::kInternal, what);
}

// AES-256-GCM fetched from the default provider once per process. Why not
// EVP_aes_256_gcm(): OpenSSL 3 looks that legacy object up in the provider
// store again on every EVP_*Init_ex (EVP_CIPHER_fetch was 4% of an LFL
// iteration's CPU, one seal per neighbour). Never freed; never null (a
// failed fetch aborts: OpenSSL's default provider is broken).
const EVP_CIPHER* Aes256GcmCipher();
// SHA-256 fetched once per process, for the same reason (HMAC in hkdf.cc).
const EVP_MD* Sha256Digest();

// EVP_* take int lengths; larger buffers must be rejected (or chunked) first.
inline bool FitsInInt(size_t n) {
  return n <= static_cast<size_t>(std::numeric_limits<int>::max());
}

}  // namespace fedmf::crypto::internal

#endif  // FEDMF_COMMON_CRYPTO_INTERNAL_OPENSSL_UTIL_H_
