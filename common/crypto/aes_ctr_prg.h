// A PRG expanding a 32-byte seed with AES-256-CTR: the mask generator of
// secure aggregation (Bonawitz et al. 2017, "PRG(b_i)" and "PRG(s_ij)").
//
// Stream definition (stable: every party must expand a seed identically):
//   keystream = AES-256-CTR(key = seed, initial counter block = 0^128) applied
//   to zeros, the counter being the whole 128-bit block, big-endian (NIST SP
//   800-38A / OpenSSL). Mask element i is keystream bytes [8i, 8i+8) read as a
//   little-endian uint64, reduced mod 2^bits by masking (uniform, since 2^bits
//   divides 2^64 -- no rejection needed).
// The seed must be uniformly random or a KDF output (hkdf.h), never a raw
// X25519 output. A seed must never be reused for two different purposes.
#ifndef FEDMF_COMMON_CRYPTO_AES_CTR_PRG_H_
#define FEDMF_COMMON_CRYPTO_AES_CTR_PRG_H_

#include <openssl/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/mod2k.h"

namespace fedmf::crypto {

inline constexpr size_t kPrgSeedBytes = 32;
inline constexpr size_t kAesBlockBytes = 16;

enum class MaskSign { kAdd, kSubtract };

class AesCtrPrg {
 public:
  // The stream defined above (initial counter block all-zero).
  static absl::StatusOr<AesCtrPrg> Create(std::span<const uint8_t> seed);
  // The same stream from its block `first_block` on (byte 16 * first_block):
  // a part of a long mask can be expanded on its own, e.g. by another thread.
  static absl::StatusOr<AesCtrPrg> CreateAtBlock(std::span<const uint8_t> seed,
                                                 uint64_t first_block);
  // Same cipher with an explicit 16-byte initial counter block: for the NIST
  // SP 800-38A known-answer test, not for masks.
  static absl::StatusOr<AesCtrPrg> CreateWithCounter(std::span<const uint8_t> seed,
                                                     std::span<const uint8_t> initial_counter);

  AesCtrPrg(AesCtrPrg&&) noexcept;
  AesCtrPrg& operator=(AesCtrPrg&&) noexcept;
  ~AesCtrPrg();  // Both engines wipe the key schedule.

  // The next out.size() keystream bytes. Streaming: Fill(a); Fill(b) produces
  // the same bytes as one Fill of a+b.
  absl::Status Fill(std::span<uint8_t> out);
  // The next out.size() mask elements (8 keystream bytes each), in [0, 2^bits).
  // 1 <= bits <= 64.
  absl::Status FillMod2k(std::span<uint64_t> out, int bits);
  // sum[i] = sum[i] +/- w_i (mod 2^32) for the next sum.size() keystream
  // words w_i (4 bytes each, little-endian): a mask in Z_{2^32} applied
  // without storing it. Streams like Fill.
  absl::Status AccumulateWords32(std::span<uint32_t> sum, MaskSign sign);

 private:
  struct CtxDeleter {
    void operator()(EVP_CIPHER_CTX* c) const;
  };
  // The VAES kernel's state (internal/aes256_ctr_kernel.h): round keys,
  // counter and the rest of a partly read block.
  struct KernelState;
  struct KernelStateDeleter {
    void operator()(KernelState* k) const;
  };

  AesCtrPrg(std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> ctx,
            std::unique_ptr<KernelState, KernelStateDeleter> kernel);
  // Keystream straight into `out` (no intermediate buffer: this is the hot path).
  absl::Status Keystream(uint8_t* out, size_t n);

  // Exactly one is set: the kernel where the CPU has VAES (twice OpenSSL's
  // AES-CTR there), else OpenSSL. Same stream either way.
  std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> ctx_;
  std::unique_ptr<KernelState, KernelStateDeleter> kernel_;
};

// The first n mask elements of `seed`'s stream, each in [0, 2^bits).
absl::StatusOr<std::vector<uint64_t>> ExpandMaskMod2k(std::span<const uint8_t> seed, size_t n,
                                                      int bits);

// acc[i] = acc[i] +/- mask[i] (mod 2^bits) with mask = ExpandMaskMod2k(seed,
// acc.size(), bits), without materialising the mask vector. This is how a
// device applies PRG(b_i) and +/-PRG(s_ij), and how the server removes them.
absl::Status ApplyMaskMod2k(std::span<const uint8_t> seed, int bits, MaskSign sign,
                            std::span<uint64_t> acc);

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_AES_CTR_PRG_H_
