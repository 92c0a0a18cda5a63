#include "common/crypto/aes_ctr_prg.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/internal/aes256_ctr_kernel.h"
#include "common/crypto/internal/openssl_util.h"

namespace fedmf::crypto {
namespace {

// Per-EVP-call granularity: big enough that call overhead vanishes next to
// AES-NI, small enough that the zero source stays in L1.
constexpr size_t kChunkBytes = 16 * 1024;

// The stream defines mask words as little-endian; only big-endian hosts pay.
inline void LittleEndianInPlace(uint64_t* words, size_t n) {
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t i = 0; i < n; ++i) words[i] = __builtin_bswap64(words[i]);
  } else {
    (void)words;
    (void)n;
  }
}

}  // namespace

struct AesCtrPrg::KernelState {
  internal::Aes256RoundKeys keys;
  internal::CounterBlock counter;
  uint8_t block[kAesBlockBytes];       // keystream of the block before `counter`
  size_t block_used = kAesBlockBytes;  // its bytes already handed out
};

void AesCtrPrg::CtxDeleter::operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }

void AesCtrPrg::KernelStateDeleter::operator()(KernelState* k) const {
  OPENSSL_cleanse(k, sizeof(*k));
  delete k;
}

AesCtrPrg::AesCtrPrg(std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> ctx,
                     std::unique_ptr<KernelState, KernelStateDeleter> kernel)
    : ctx_(std::move(ctx)), kernel_(std::move(kernel)) {}
AesCtrPrg::AesCtrPrg(AesCtrPrg&&) noexcept = default;
AesCtrPrg& AesCtrPrg::operator=(AesCtrPrg&&) noexcept = default;
AesCtrPrg::~AesCtrPrg() = default;

absl::StatusOr<AesCtrPrg> AesCtrPrg::Create(std::span<const uint8_t> seed) {
  static constexpr uint8_t kZeroCounter[kAesBlockBytes] = {0};
  return CreateWithCounter(seed, kZeroCounter);
}

absl::StatusOr<AesCtrPrg> AesCtrPrg::CreateAtBlock(std::span<const uint8_t> seed,
                                                   uint64_t first_block) {
  // The counter is the whole 128-bit block, big-endian, starting at zero.
  uint8_t counter[kAesBlockBytes] = {0};
  for (size_t i = 0; i < 8; ++i) {
    counter[kAesBlockBytes - 1 - i] = static_cast<uint8_t>(first_block >> (8 * i));
  }
  return CreateWithCounter(seed, counter);
}

absl::StatusOr<AesCtrPrg> AesCtrPrg::CreateWithCounter(std::span<const uint8_t> seed,
                                                       std::span<const uint8_t> initial_counter) {
  if (seed.size() != kPrgSeedBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("AES-CTR PRG seed must be 32 bytes, got ", seed.size()));
  }
  if (initial_counter.size() != kAesBlockBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AES-CTR initial counter block must be 16 bytes, got ", initial_counter.size()));
  }
  if (internal::UseAes256CtrKernel()) {
    std::unique_ptr<KernelState, KernelStateDeleter> kernel(new KernelState);
    internal::ExpandAes256Key(seed.data(), &kernel->keys);
    for (size_t i = 0; i < 8; ++i) {
      kernel->counter.high = (kernel->counter.high << 8) | initial_counter[i];
      kernel->counter.low = (kernel->counter.low << 8) | initial_counter[8 + i];
    }
    return AesCtrPrg(nullptr, std::move(kernel));
  }
  std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr) return internal::OpenSslInternal("EVP_CIPHER_CTX_new");
  if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_ctr(), nullptr, seed.data(),
                         initial_counter.data()) != 1) {
    return internal::OpenSslInternal("EVP_EncryptInit_ex(aes-256-ctr)");
  }
  return AesCtrPrg(std::move(ctx), nullptr);
}

absl::Status AesCtrPrg::Keystream(uint8_t* out, size_t n) {
  if (n == 0) return absl::OkStatus();  // `out` may be null (an empty span)
  if (kernel_ != nullptr) {
    KernelState& k = *kernel_;
    const size_t from_block = std::min(n, kAesBlockBytes - k.block_used);
    std::memcpy(out, k.block + k.block_used, from_block);
    k.block_used += from_block;
    out += from_block;
    n -= from_block;
    const size_t whole = n / kAesBlockBytes;
    internal::Aes256CtrKeystream(k.keys, &k.counter, whole, out);
    out += whole * kAesBlockBytes;
    n -= whole * kAesBlockBytes;
    if (n > 0) {
      internal::Aes256CtrKeystream(k.keys, &k.counter, 1, k.block);
      std::memcpy(out, k.block, n);
      k.block_used = n;
    }
    return absl::OkStatus();
  }
  // CTR keystream = encryption of zeros.
  static constexpr uint8_t kZeros[kChunkBytes] = {0};
  while (n > 0) {
    const size_t take = std::min(n, kChunkBytes);
    int out_len = 0;
    if (EVP_EncryptUpdate(ctx_.get(), out, &out_len, kZeros, static_cast<int>(take)) != 1 ||
        out_len != static_cast<int>(take)) {
      return internal::OpenSslInternal("EVP_EncryptUpdate(aes-256-ctr)");
    }
    out += take;
    n -= take;
  }
  return absl::OkStatus();
}

absl::Status AesCtrPrg::Fill(std::span<uint8_t> out) { return Keystream(out.data(), out.size()); }

absl::Status AesCtrPrg::FillMod2k(std::span<uint64_t> out, int bits) {
  RETURN_IF_ERROR(CheckModulusBits(bits));
  if (out.size() > SIZE_MAX / sizeof(uint64_t)) return absl::InvalidArgumentError("too many masks");
  // Writing keystream bytes into uint64 storage is fine: uint8_t may alias.
  if (absl::Status s = Keystream(reinterpret_cast<uint8_t*>(out.data()), out.size_bytes());
      !s.ok()) {
    return s;
  }
  LittleEndianInPlace(out.data(), out.size());
  const uint64_t mask = LowBitsMask(bits);
  if (mask != ~uint64_t{0}) {
    for (uint64_t& v : out) v &= mask;
  }
  return absl::OkStatus();
}

absl::Status AesCtrPrg::AccumulateWords32(std::span<uint32_t> sum, MaskSign sign) {
  const bool subtract = sign == MaskSign::kSubtract;
  if (kernel_ != nullptr && kernel_->block_used == kAesBlockBytes) {  // block-aligned
    KernelState& k = *kernel_;
    constexpr size_t kWordsPerBlock = kAesBlockBytes / 4;
    const size_t whole = sum.size() / kWordsPerBlock;
    internal::Aes256CtrAccumulate32(k.keys, &k.counter, whole, subtract, sum.data());
    if (const size_t rest = sum.size() % kWordsPerBlock; rest > 0) {
      internal::Aes256CtrKeystream(k.keys, &k.counter, 1, k.block);
      for (size_t i = 0; i < rest; ++i) {
        uint32_t w;
        std::memcpy(&w, k.block + 4 * i, 4);  // the kernel runs on x86: little-endian
        sum[whole * kWordsPerBlock + i] += subtract ? 0 - w : w;
      }
      k.block_used = 4 * rest;
    }
    return absl::OkStatus();
  }
  constexpr size_t kWords = 1024;
  alignas(64) uint32_t words[kWords];
  absl::Status status = absl::OkStatus();
  for (size_t pos = 0; pos < sum.size() && status.ok(); pos += kWords) {
    const size_t take = std::min(kWords, sum.size() - pos);
    status = Keystream(reinterpret_cast<uint8_t*>(words), 4 * take);
    if (!status.ok()) break;
    for (size_t i = 0; i < take; ++i) {
      uint32_t w = words[i];
      if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap32(w);
      sum[pos + i] += subtract ? 0 - w : w;
    }
  }
  OPENSSL_cleanse(words, sizeof(words));  // as secret as the seed
  return status;
}

absl::StatusOr<std::vector<uint64_t>> ExpandMaskMod2k(std::span<const uint8_t> seed, size_t n,
                                                      int bits) {
  RETURN_IF_ERROR(CheckModulusBits(bits));
  ASSIGN_OR_RETURN(AesCtrPrg prg, AesCtrPrg::Create(seed));
  std::vector<uint64_t> out(n);
  RETURN_IF_ERROR(prg.FillMod2k(out, bits));
  return out;
}

absl::Status ApplyMaskMod2k(std::span<const uint8_t> seed, int bits, MaskSign sign,
                            std::span<uint64_t> acc) {
  RETURN_IF_ERROR(CheckModulusBits(bits));
  ASSIGN_OR_RETURN(AesCtrPrg prg, AesCtrPrg::Create(seed));
  constexpr size_t kWords = kChunkBytes / sizeof(uint64_t);
  alignas(64) uint64_t buf[kWords];
  const uint64_t mask = LowBitsMask(bits);
  absl::Status status = absl::OkStatus();
  for (size_t pos = 0; pos < acc.size() && status.ok(); pos += kWords) {
    const size_t take = std::min(kWords, acc.size() - pos);
    status = prg.FillMod2k(std::span<uint64_t>(buf, take), 64);
    if (!status.ok()) break;
    uint64_t* a = acc.data() + pos;
    // Unsigned arithmetic wraps mod 2^64, and 2^bits divides 2^64, so the
    // final mask gives the result mod 2^bits.
    if (sign == MaskSign::kAdd) {
      for (size_t i = 0; i < take; ++i) a[i] = (a[i] + buf[i]) & mask;
    } else {
      for (size_t i = 0; i < take; ++i) a[i] = (a[i] - buf[i]) & mask;
    }
  }
  // The mask words are as secret as the seed.
  OPENSSL_cleanse(buf, sizeof(buf));
  return status;
}

}  // namespace fedmf::crypto
