#include "common/crypto/ed25519.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/openssl_util.h"
#include "common/crypto/secret_bytes.h"

namespace fedmf::crypto {
namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};

}  // namespace

void Ed25519PrivateKey::PkeyDeleter::operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }

Ed25519PrivateKey::Ed25519PrivateKey(std::unique_ptr<EVP_PKEY, PkeyDeleter> pkey,
                                     const Ed25519PublicKey& pub)
    : pkey_(std::move(pkey)), public_key_(pub) {}
Ed25519PrivateKey::Ed25519PrivateKey(Ed25519PrivateKey&&) noexcept = default;
Ed25519PrivateKey& Ed25519PrivateKey::operator=(Ed25519PrivateKey&&) noexcept = default;
Ed25519PrivateKey::~Ed25519PrivateKey() = default;

absl::StatusOr<Ed25519PublicKey> ParseEd25519PublicKey(std::span<const uint8_t> bytes) {
  if (bytes.size() != kEd25519PublicKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ed25519 public key must be 32 bytes, got ", bytes.size()));
  }
  Ed25519PublicKey key;
  std::copy(bytes.begin(), bytes.end(), key.begin());
  return key;
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::Generate(random::Csprng& rng) {
  SecretBytes seed(kEd25519PrivateKeyBytes);
  rng.FillBytes(seed.data(), seed.size());
  return FromSeed(seed.span());
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::FromSeed(std::span<const uint8_t> seed) {
  if (seed.size() != kEd25519PrivateKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ed25519 private key seed must be 32 bytes, got ", seed.size()));
  }
  std::unique_ptr<EVP_PKEY, PkeyDeleter> pkey(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
  if (pkey == nullptr) return internal::OpenSslInternal("EVP_PKEY_new_raw_private_key(Ed25519)");
  Ed25519PublicKey pub;
  size_t pub_len = pub.size();
  if (EVP_PKEY_get_raw_public_key(pkey.get(), pub.data(), &pub_len) != 1 ||
      pub_len != pub.size()) {
    return internal::OpenSslInternal("EVP_PKEY_get_raw_public_key(Ed25519)");
  }
  return Ed25519PrivateKey(std::move(pkey), pub);
}

absl::StatusOr<std::vector<uint8_t>> Ed25519PrivateKey::Sign(
    std::span<const uint8_t> message) const {
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  if (ctx == nullptr) return internal::OpenSslInternal("EVP_MD_CTX_new");
  // Ed25519 is one-shot: no digest (nullptr), EVP_DigestSign over the message.
  if (EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey_.get()) != 1) {
    return internal::OpenSslInternal("EVP_DigestSignInit(Ed25519)");
  }
  std::vector<uint8_t> sig(kEd25519SignatureBytes);
  size_t len = sig.size();
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, message.data(), message.size()) != 1 ||
      len != sig.size()) {
    return internal::OpenSslInternal("EVP_DigestSign(Ed25519)");
  }
  return sig;
}

absl::Status Ed25519Verify(const Ed25519PublicKey& key, std::span<const uint8_t> message,
                           std::span<const uint8_t> signature) {
  if (signature.size() != kEd25519SignatureBytes) {
    return absl::UnauthenticatedError(absl::StrCat("Ed25519 signature must be 64 bytes, got ",
                                                   signature.size()));
  }
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size()));
  if (pkey == nullptr) {
    ERR_clear_error();
    return absl::UnauthenticatedError("Ed25519 public key rejected");
  }
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  if (ctx == nullptr) return internal::OpenSslInternal("EVP_MD_CTX_new");
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) {
    ERR_clear_error();
    return absl::UnauthenticatedError("Ed25519 public key rejected");
  }
  if (EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), message.data(),
                       message.size()) != 1) {
    ERR_clear_error();  // a bad signature is input, not an OpenSSL failure to report later
    return absl::UnauthenticatedError("Ed25519 signature does not verify");
  }
  return absl::OkStatus();
}

}  // namespace fedmf::crypto
