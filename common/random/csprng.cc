#include "common/random/csprng.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/crypto/internal/aes256_ctr_kernel.h"

namespace fedmf::random {
namespace {

// Keystream is produced in blocks of this many bytes; large enough that the
// EVP call overhead is negligible next to AES-NI throughput.
constexpr size_t kBufferBytes = 4096;

[[noreturn]] void Fatal(const char* what) {
  std::fprintf(stderr, "fedmf: fatal CSPRNG error: %s\n", what);
  std::abort();
}

std::array<uint8_t, 32> Sha256(const uint8_t* data, size_t n) {
  std::array<uint8_t, 32> out;
  if (SHA256(data, n, out.data()) == nullptr) Fatal("SHA256 failed");
  return out;
}

}  // namespace

// The keystream runs on the VAES kernel where the CPU has it (twice
// OpenSSL's AES-CTR there), else on OpenSSL: the same stream either way.
struct Csprng::Impl {
  std::array<uint8_t, 32> key{};
  EVP_CIPHER_CTX* ctx = nullptr;  // null when the kernel runs
  crypto::internal::Aes256RoundKeys round_keys;
  crypto::internal::CounterBlock counter;  // the kernel's next block
  alignas(32) uint8_t buffer[kBufferBytes];
  size_t pos = kBufferBytes;  // next unread byte; == size means empty

  ~Impl() {
    if (ctx != nullptr) EVP_CIPHER_CTX_free(ctx);
    OPENSSL_cleanse(key.data(), key.size());
    OPENSSL_cleanse(&round_keys, sizeof(round_keys));
    OPENSSL_cleanse(buffer, sizeof(buffer));
  }
};

Csprng::Csprng(const std::array<uint8_t, 32>& key)
    : Csprng(key, crypto::internal::UseAes256CtrKernel()) {}

Csprng::Csprng(const std::array<uint8_t, 32>& key, bool kernel) : impl_(std::make_unique<Impl>()) {
  impl_->key = key;
  // The key is unique per stream, so a zero counter start is safe.
  if (kernel) {
    crypto::internal::ExpandAes256Key(impl_->key.data(), &impl_->round_keys);
    return;
  }
  impl_->ctx = EVP_CIPHER_CTX_new();
  if (impl_->ctx == nullptr) Fatal("EVP_CIPHER_CTX_new");
  const uint8_t iv[16] = {0};
  if (EVP_EncryptInit_ex(impl_->ctx, EVP_aes_256_ctr(), nullptr, impl_->key.data(), iv) != 1) {
    Fatal("EVP_EncryptInit_ex(aes-256-ctr)");
  }
}

Csprng::Csprng(Csprng&&) noexcept = default;
Csprng& Csprng::operator=(Csprng&&) noexcept = default;
Csprng::~Csprng() = default;

Csprng Csprng::FromOsEntropy() {
  std::array<uint8_t, 32> key;
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) Fatal("RAND_bytes");
  return Csprng(key);
}

Csprng Csprng::FromSeed(uint64_t seed) {
  std::string material = "fedmf/csprng/seed/v1:" + std::to_string(seed);
  return Csprng(Sha256(reinterpret_cast<const uint8_t*>(material.data()), material.size()));
}

Csprng Csprng::FromOptionalSeed(std::optional<uint64_t> seed) {
  return seed.has_value() ? FromSeed(*seed) : FromOsEntropy();
}

Csprng Csprng::Fork(std::string_view label) const {
  // child key = SHA-256("fedmf/csprng/fork/v1" || key || label): one-way, so a
  // child never reveals its parent or its siblings.
  std::string material = "fedmf/csprng/fork/v1";
  material.append(reinterpret_cast<const char*>(impl_->key.data()), impl_->key.size());
  material.append(label.data(), label.size());
  auto child = Sha256(reinterpret_cast<const uint8_t*>(material.data()), material.size());
  OPENSSL_cleanse(material.data(), material.size());
  return Csprng(child);
}

Csprng Csprng::Replica() const {
  Csprng copy(impl_->key, /*kernel=*/impl_->ctx == nullptr);  // this stream's engine
  // The counter (in the cipher context or the kernel's block); the buffer,
  // the unread keystream.
  copy.impl_->counter = impl_->counter;
  if (impl_->ctx != nullptr && EVP_CIPHER_CTX_copy(copy.impl_->ctx, impl_->ctx) != 1) {
    Fatal("EVP_CIPHER_CTX_copy");
  }
  std::memcpy(copy.impl_->buffer, impl_->buffer, kBufferBytes);
  copy.impl_->pos = impl_->pos;
  return copy;
}

void Csprng::Refill() {
  impl_->pos = 0;
  if (impl_->ctx == nullptr) {
    crypto::internal::Aes256CtrKeystream(impl_->round_keys, &impl_->counter, kBufferBytes / 16,
                                         impl_->buffer);
    return;
  }
  // Encrypting zeros with AES-CTR yields the raw keystream.
  static const uint8_t kZeros[kBufferBytes] = {0};
  int out_len = 0;
  if (EVP_EncryptUpdate(impl_->ctx, impl_->buffer, &out_len, kZeros, kBufferBytes) != 1 ||
      out_len != static_cast<int>(kBufferBytes)) {
    Fatal("EVP_EncryptUpdate");
  }
}

void Csprng::FillBytes(uint8_t* out, size_t n) {
  while (n > 0) {
    if (impl_->pos == kBufferBytes) Refill();
    size_t take = std::min(n, kBufferBytes - impl_->pos);
    std::memcpy(out, impl_->buffer + impl_->pos, take);
    impl_->pos += take;
    out += take;
    n -= take;
  }
}

uint64_t Csprng::NextU64() {
  if (kBufferBytes - impl_->pos < sizeof(uint64_t)) {
    // Keep reads aligned to 8-byte units: discard the (never partial) tail.
    Refill();
  }
  uint64_t v;
  std::memcpy(&v, impl_->buffer + impl_->pos, sizeof(v));
  impl_->pos += sizeof(v);
  return v;
}

double Csprng::NextDouble() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

double Csprng::NextOpenDouble() {
  // (k + 0.5) / 2^53 for k in [0, 2^53): symmetric, never 0 or 1.
  return (static_cast<double>(NextU64() >> 11) + 0.5) * 0x1.0p-53;
}

uint64_t Csprng::UniformInt(uint64_t bound) {
  if (bound <= 1) return 0;
  // Lemire's nearly-divisionless method with rejection: exact uniformity.
  unsigned __int128 m = static_cast<unsigned __int128>(NextU64()) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(NextU64()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

bool Csprng::Bernoulli(double p) {
  if (p <= 0) return false;
  if (p >= 1) return true;
  return NextDouble() < p;
}

}  // namespace fedmf::random
