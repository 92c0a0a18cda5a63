#include "common/crypto/x25519.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/openssl_util.h"

namespace fedmf::crypto {
namespace {

struct PkeyCtxDeleter {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};

}  // namespace

void X25519PrivateKey::PkeyDeleter::operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }

X25519PrivateKey::X25519PrivateKey(std::unique_ptr<EVP_PKEY, PkeyDeleter> pkey,
                                   const X25519PublicKey& pub)
    : pkey_(std::move(pkey)), public_key_(pub) {}
X25519PrivateKey::X25519PrivateKey(X25519PrivateKey&&) noexcept = default;
X25519PrivateKey& X25519PrivateKey::operator=(X25519PrivateKey&&) noexcept = default;
X25519PrivateKey::~X25519PrivateKey() = default;

absl::StatusOr<X25519PublicKey> ParseX25519PublicKey(std::span<const uint8_t> bytes) {
  if (bytes.size() != kX25519KeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("X25519 public key must be 32 bytes, got ", bytes.size()));
  }
  X25519PublicKey key;
  std::copy(bytes.begin(), bytes.end(), key.begin());
  return key;
}

absl::StatusOr<X25519PrivateKey> X25519PrivateKey::Generate(random::Csprng& rng) {
  SecretBytes scalar(kX25519KeyBytes);
  rng.FillBytes(scalar.data(), scalar.size());
  return FromBytes(scalar.span());
}

absl::StatusOr<X25519PrivateKey> X25519PrivateKey::FromBytes(std::span<const uint8_t> scalar) {
  if (scalar.size() != kX25519KeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("X25519 private key must be 32 bytes, got ", scalar.size()));
  }
  std::unique_ptr<EVP_PKEY, PkeyDeleter> pkey(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, scalar.data(), scalar.size()));
  if (pkey == nullptr) return internal::OpenSslInternal("EVP_PKEY_new_raw_private_key(X25519)");
  X25519PublicKey pub;
  size_t pub_len = pub.size();
  if (EVP_PKEY_get_raw_public_key(pkey.get(), pub.data(), &pub_len) != 1 ||
      pub_len != pub.size()) {
    return internal::OpenSslInternal("EVP_PKEY_get_raw_public_key(X25519)");
  }
  return X25519PrivateKey(std::move(pkey), pub);
}

absl::StatusOr<SecretBytes> X25519PrivateKey::ExportBytes() const {
  SecretBytes out(kX25519KeyBytes);
  size_t len = out.size();
  if (EVP_PKEY_get_raw_private_key(pkey_.get(), out.data(), &len) != 1 || len != out.size()) {
    return internal::OpenSslInternal("EVP_PKEY_get_raw_private_key(X25519)");
  }
  return out;
}

absl::StatusOr<SecretBytes> X25519PrivateKey::Agree(const X25519PublicKey& peer) const {
  std::unique_ptr<EVP_PKEY, PkeyDeleter> peer_key(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer.data(), peer.size()));
  if (peer_key == nullptr) return internal::OpenSslInternal("EVP_PKEY_new_raw_public_key(X25519)");
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter> ctx(EVP_PKEY_CTX_new(pkey_.get(), nullptr));
  if (ctx == nullptr) return internal::OpenSslInternal("EVP_PKEY_CTX_new");
  if (EVP_PKEY_derive_init(ctx.get()) != 1) return internal::OpenSslInternal("EVP_PKEY_derive_init");
  if (EVP_PKEY_derive_set_peer(ctx.get(), peer_key.get()) != 1) {
    return internal::OpenSslError(absl::StatusCode::kInvalidArgument,
                                  "X25519: peer public key rejected");
  }
  SecretBytes shared(kX25519KeyBytes);
  size_t len = shared.size();
  if (EVP_PKEY_derive(ctx.get(), shared.data(), &len) != 1) {
    // OpenSSL itself refuses an all-zero result; that is the only way a
    // derive on two well-formed X25519 keys fails.
    ERR_clear_error();
    return absl::InvalidArgumentError(
        "X25519: agreement produced the all-zero secret (peer sent a low-order point)");
  }
  if (len != shared.size()) return absl::InternalError("X25519: unexpected shared secret size");
  // Belt and braces: do not rely on the provider's check alone.
  static constexpr uint8_t kZeros[kX25519KeyBytes] = {0};
  if (CRYPTO_memcmp(shared.data(), kZeros, sizeof(kZeros)) == 0) {
    return absl::InvalidArgumentError(
        "X25519: agreement produced the all-zero secret (peer sent a low-order point)");
  }
  return shared;
}

}  // namespace fedmf::crypto
