#include "common/crypto/hkdf.h"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/internal/openssl_util.h"

namespace fedmf::crypto {
namespace {

struct KdfDeleter {
  void operator()(EVP_KDF* k) const { EVP_KDF_free(k); }
};
struct KdfCtxDeleter {
  void operator()(EVP_KDF_CTX* c) const { EVP_KDF_CTX_free(c); }
};

absl::Status CheckLength(size_t length) {
  if (length == 0 || length > kHkdfSha256MaxOutput) {
    return absl::InvalidArgumentError(
        absl::StrCat("HKDF-SHA256 output length must be in [1, 8160], got ", length));
  }
  return absl::OkStatus();
}

// One EVP_KDF "HKDF" invocation in the given mode. `key` is the IKM for the
// extract modes and the PRK for EXPAND_ONLY. Empty salt/info are simply not
// passed, which OpenSSL treats as RFC 5869's defaults.
absl::StatusOr<SecretBytes> RunHkdf(int mode, std::span<const uint8_t> key,
                                    std::span<const uint8_t> salt, std::span<const uint8_t> info,
                                    size_t length) {
  if (key.empty()) return absl::InvalidArgumentError("HKDF-SHA256: empty input key material");
  std::unique_ptr<EVP_KDF, KdfDeleter> kdf(EVP_KDF_fetch(nullptr, OSSL_KDF_NAME_HKDF, nullptr));
  if (kdf == nullptr) return internal::OpenSslInternal("EVP_KDF_fetch(HKDF)");
  std::unique_ptr<EVP_KDF_CTX, KdfCtxDeleter> ctx(EVP_KDF_CTX_new(kdf.get()));
  if (ctx == nullptr) return internal::OpenSslInternal("EVP_KDF_CTX_new");

  // OSSL_PARAM wants non-const pointers but only reads them.
  char digest[] = "SHA256";
  OSSL_PARAM params[6];
  size_t n = 0;
  params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  params[n++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
  params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
                                                  const_cast<uint8_t*>(key.data()), key.size());
  if (!salt.empty()) {
    params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
                                                    const_cast<uint8_t*>(salt.data()), salt.size());
  }
  if (!info.empty()) {
    params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
                                                    const_cast<uint8_t*>(info.data()), info.size());
  }
  params[n] = OSSL_PARAM_construct_end();

  SecretBytes out(length);
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    return internal::OpenSslInternal("EVP_KDF_derive(HKDF-SHA256)");
  }
  return out;
}

}  // namespace

absl::StatusOr<SecretBytes> HkdfSha256(std::span<const uint8_t> ikm, std::span<const uint8_t> salt,
                                       std::span<const uint8_t> info, size_t length) {
  RETURN_IF_ERROR(CheckLength(length));
  return RunHkdf(EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, ikm, salt, info, length);
}

absl::StatusOr<SecretBytes> HkdfSha256Extract(std::span<const uint8_t> salt,
                                              std::span<const uint8_t> ikm) {
  return RunHkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, ikm, salt, {}, kSha256Bytes);
}

absl::StatusOr<SecretBytes> HkdfSha256Expand(std::span<const uint8_t> prk,
                                             std::span<const uint8_t> info, size_t length) {
  RETURN_IF_ERROR(CheckLength(length));
  if (prk.size() < kSha256Bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("HKDF-SHA256 expand: PRK must be >= 32 bytes, got ", prk.size()));
  }
  return RunHkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, {}, info, length);
}

}  // namespace fedmf::crypto
