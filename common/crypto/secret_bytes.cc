#include "common/crypto/secret_bytes.h"

#include <openssl/crypto.h>

#include <utility>

namespace fedmf::crypto {

SecretBytes::SecretBytes(size_t n) : bytes_(n, 0) {}

SecretBytes::SecretBytes(std::span<const uint8_t> bytes) : bytes_(bytes.begin(), bytes.end()) {}

SecretBytes::SecretBytes(const SecretBytes& other) : bytes_(other.bytes_) {}

SecretBytes& SecretBytes::operator=(const SecretBytes& other) {
  if (this != &other) {
    Wipe();
    bytes_ = other.bytes_;
  }
  return *this;
}

// Moving hands the heap buffer over, so nothing is left behind to wipe.
SecretBytes::SecretBytes(SecretBytes&& other) noexcept : bytes_(std::move(other.bytes_)) {
  other.bytes_.clear();
}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
  if (this != &other) {
    Wipe();
    bytes_ = std::move(other.bytes_);
    other.bytes_.clear();
  }
  return *this;
}

SecretBytes::~SecretBytes() { Wipe(); }

void SecretBytes::Wipe() {
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

bool ConstantTimeEquals(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool operator==(const SecretBytes& a, const SecretBytes& b) {
  return ConstantTimeEquals(a.span(), b.span());
}

}  // namespace fedmf::crypto
