#include "common/crypto/aes_gcm.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/internal/openssl_util.h"

namespace fedmf::crypto {
namespace {

struct CtxDeleter {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter>;

// Headroom below INT_MAX so that length + nonce + tag still fits an int.
constexpr size_t kMaxMessageBytes = (size_t{1} << 30);

absl::Status CheckKey(std::span<const uint8_t> key) {
  if (key.size() != kAesGcmKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("AES-256-GCM key must be 32 bytes, got ", key.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckSizes(size_t text, size_t aad) {
  if (text > kMaxMessageBytes || aad > kMaxMessageBytes) {
    return absl::InvalidArgumentError(
        "AES-256-GCM: message or associated data too large (> 1 GiB)");
  }
  return absl::OkStatus();
}

// This thread's AES-256-GCM context for one direction, set to the cipher
// once and re-keyed by every call. Why: OpenSSL 3 allocates a provider
// context on every EVP_CIPHER_CTX_new and wipes and frees it on every
// EVP_CIPHER_CTX_free, a sizeable part of sealing or opening a 100-byte
// share bundle (BM_AesGcmSeal/128, BM_AesGcmOpen/128; docs/benchmarks.md).
// The last message's key schedule stays in the context until the thread's
// next call or its exit (then the free wipes it). Not wiped after each
// call: re-keying costs as much as the allocation saved, and a reader of
// this process's memory would find what the message keys derive from anyway
// (SecAgg, the only user: the device's X25519 keys for the aggregation, or
// its session keys for the session). Null if OpenSSL cannot allocate it.
EVP_CIPHER_CTX* ThreadContext(bool encrypt) {
  struct Contexts {
    CtxPtr seal;
    CtxPtr open;
  };
  thread_local Contexts contexts;
  CtxPtr& ctx = encrypt ? contexts.seal : contexts.open;
  if (ctx == nullptr) {
    CtxPtr fresh(EVP_CIPHER_CTX_new());
    if (fresh == nullptr || EVP_CipherInit_ex(fresh.get(), internal::Aes256GcmCipher(), nullptr,
                                              nullptr, nullptr, encrypt ? 1 : 0) != 1) {
      return nullptr;
    }
    ctx = std::move(fresh);
  }
  return ctx.get();
}

// Feeds associated data; skipped when empty (OpenSSL needs no call for it).
bool UpdateAad(EVP_CIPHER_CTX* ctx, std::span<const uint8_t> aad, bool encrypt) {
  if (aad.empty()) return true;
  int len = 0;
  return (encrypt ? EVP_EncryptUpdate(ctx, nullptr, &len, aad.data(), static_cast<int>(aad.size()))
                  : EVP_DecryptUpdate(ctx, nullptr, &len, aad.data(),
                                      static_cast<int>(aad.size()))) == 1;
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> AesGcmSeal(std::span<const uint8_t> key,
                                                std::span<const uint8_t> plaintext,
                                                std::span<const uint8_t> associated_data,
                                                random::Csprng& rng) {
  uint8_t nonce[kAesGcmNonceBytes];
  rng.FillBytes(nonce, sizeof(nonce));
  return AesGcmSealWithNonce(key, nonce, plaintext, associated_data);
}

absl::StatusOr<std::vector<uint8_t>> AesGcmSealWithNonce(std::span<const uint8_t> key,
                                                         std::span<const uint8_t> nonce,
                                                         std::span<const uint8_t> plaintext,
                                                         std::span<const uint8_t> associated_data) {
  RETURN_IF_ERROR(CheckKey(key));
  if (nonce.size() != kAesGcmNonceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("AES-256-GCM nonce must be 12 bytes, got ", nonce.size()));
  }
  RETURN_IF_ERROR(CheckSizes(plaintext.size(), associated_data.size()));

  EVP_CIPHER_CTX* const ctx = ThreadContext(/*encrypt=*/true);
  if (ctx == nullptr) return internal::OpenSslInternal("EVP_CIPHER_CTX_new(aes-256-gcm)");
  // 12 bytes is GCM's default IV length in OpenSSL, so no SET_IVLEN is needed.
  if (EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), nonce.data()) != 1) {
    return internal::OpenSslInternal("EVP_EncryptInit_ex(aes-256-gcm)");
  }
  if (!UpdateAad(ctx, associated_data, /*encrypt=*/true)) {
    return internal::OpenSslInternal("AES-256-GCM: associated data");
  }
  std::vector<uint8_t> out(kAesGcmNonceBytes + plaintext.size() + kAesGcmTagBytes);
  std::copy(nonce.begin(), nonce.end(), out.begin());
  uint8_t* ct = out.data() + kAesGcmNonceBytes;
  int len = 0;
  if (!plaintext.empty()) {
    if (EVP_EncryptUpdate(ctx, ct, &len, plaintext.data(), static_cast<int>(plaintext.size())) !=
            1 ||
        static_cast<size_t>(len) != plaintext.size()) {
      return internal::OpenSslInternal("EVP_EncryptUpdate(aes-256-gcm)");
    }
  }
  int final_len = 0;
  if (EVP_EncryptFinal_ex(ctx, ct + plaintext.size(), &final_len) != 1 || final_len != 0) {
    return internal::OpenSslInternal("EVP_EncryptFinal_ex(aes-256-gcm)");
  }
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kAesGcmTagBytes, ct + plaintext.size()) != 1) {
    return internal::OpenSslInternal("AES-256-GCM: get tag");
  }
  return out;
}

absl::StatusOr<SecretBytes> AesGcmOpen(std::span<const uint8_t> key,
                                       std::span<const uint8_t> sealed,
                                       std::span<const uint8_t> associated_data) {
  RETURN_IF_ERROR(CheckKey(key));
  if (sealed.size() < kAesGcmOverheadBytes) {
    return absl::InvalidArgumentError(absl::StrCat("AES-256-GCM: sealed message of ", sealed.size(),
                                                   " bytes is shorter than nonce + tag (28)"));
  }
  const size_t ct_len = sealed.size() - kAesGcmOverheadBytes;
  RETURN_IF_ERROR(CheckSizes(ct_len, associated_data.size()));
  const uint8_t* nonce = sealed.data();
  const uint8_t* ct = nonce + kAesGcmNonceBytes;
  const uint8_t* tag = ct + ct_len;

  EVP_CIPHER_CTX* const ctx = ThreadContext(/*encrypt=*/false);
  if (ctx == nullptr) return internal::OpenSslInternal("EVP_CIPHER_CTX_new(aes-256-gcm)");
  if (EVP_DecryptInit_ex(ctx, nullptr, nullptr, key.data(), nonce) != 1) {
    return internal::OpenSslInternal("EVP_DecryptInit_ex(aes-256-gcm)");
  }
  if (!UpdateAad(ctx, associated_data, /*encrypt=*/false)) {
    return internal::OpenSslInternal("AES-256-GCM: associated data");
  }
  // SecretBytes wipes the unauthenticated plaintext if we bail out below.
  SecretBytes plaintext(ct_len);
  int len = 0;
  if (ct_len > 0) {
    if (EVP_DecryptUpdate(ctx, plaintext.data(), &len, ct, static_cast<int>(ct_len)) != 1 ||
        static_cast<size_t>(len) != ct_len) {
      return internal::OpenSslInternal("EVP_DecryptUpdate(aes-256-gcm)");
    }
  }
  // OpenSSL's ctrl takes a non-const tag buffer but only reads it.
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kAesGcmTagBytes, const_cast<uint8_t*>(tag)) !=
      1) {
    return internal::OpenSslInternal("AES-256-GCM: set tag");
  }
  int final_len = 0;
  if (EVP_DecryptFinal_ex(ctx, plaintext.data() + ct_len, &final_len) != 1) {
    ERR_clear_error();
    return absl::DataLossError(
        "AES-256-GCM: authentication failed (nonce, ciphertext, tag or associated data modified, "
        "or wrong key)");
  }
  return plaintext;
}

}  // namespace fedmf::crypto
