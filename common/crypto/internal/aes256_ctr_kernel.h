// Internal to common/crypto (and the CSPRNG): AES-256 in counter mode on the
// CPU's vector AES instructions (VAES: two blocks per instruction on 256-bit
// registers), for the keystream that secure aggregation's masks and the
// noise sampler read by the gigabyte.
//
// Why not OpenSSL: OpenSSL 3.0's AES-CTR runs one block per AES instruction
// (AES-NI on 128-bit registers) on CPUs without AVX-512, about half of what a
// VAES core can do. The stream is the same: AES-256 of the 128-bit
// big-endian counter block (NIST SP 800-38A), the whole block incremented,
// as OpenSSL's EVP_aes_256_ctr — tests compare the two byte for byte.
//
// Callers check Available() once and keep OpenSSL as the path otherwise.
// Constant time: AES instructions do no table lookups, and nothing here
// branches on key or keystream.
#ifndef FEDMF_COMMON_CRYPTO_INTERNAL_AES256_CTR_KERNEL_H_
#define FEDMF_COMMON_CRYPTO_INTERNAL_AES256_CTR_KERNEL_H_

#include <cstddef>
#include <cstdint>

namespace fedmf::crypto::internal {

// The 15 round keys of AES-256, in the byte order the AES instructions take,
// each twice (both 128-bit lanes of a VAES operand, so the kernel reads them
// from here and keeps no copy). As secret as the key: owners wipe it
// (OPENSSL_cleanse) when done.
struct Aes256RoundKeys {
  alignas(32) uint8_t bytes[15][32];
};

// A counter block as a 128-bit number (the block is its big-endian bytes).
struct CounterBlock {
  uint64_t high = 0;
  uint64_t low = 0;
};

// True iff this CPU (and OS) run the kernel: AES-NI, AVX2 and VAES.
bool Aes256CtrKernelAvailable();

// Whether AesCtrPrg and Csprng streams created now run on the kernel:
// Aes256CtrKernelAvailable(), unless a test holds an
// OpenSslAesCtrForTesting (so that the OpenSSL path is tested on VAES
// machines too).
bool UseAes256CtrKernel();
class OpenSslAesCtrForTesting {
 public:
  OpenSslAesCtrForTesting();
  ~OpenSslAesCtrForTesting();
  OpenSslAesCtrForTesting(const OpenSslAesCtrForTesting&) = delete;
  OpenSslAesCtrForTesting& operator=(const OpenSslAesCtrForTesting&) = delete;
};

// Requires Aes256CtrKernelAvailable().
void ExpandAes256Key(const uint8_t key[32], Aes256RoundKeys* out);

// Writes the keystream of `blocks` counter blocks starting at *counter to
// out[0, 16 * blocks) and advances *counter past them (mod 2^128).
// Requires Aes256CtrKernelAvailable().
void Aes256CtrKeystream(const Aes256RoundKeys& keys, CounterBlock* counter, size_t blocks,
                        uint8_t* out);

// sum[i] += w_i (or -= w_i if `subtract`), mod 2^32, for the 4 * blocks
// keystream words w_i (little-endian) of the same stream, without storing
// them: how a mask in Z_{2^32} is applied. Advances *counter likewise.
// Requires Aes256CtrKernelAvailable().
void Aes256CtrAccumulate32(const Aes256RoundKeys& keys, CounterBlock* counter, size_t blocks,
                           bool subtract, uint32_t* sum);

}  // namespace fedmf::crypto::internal

#endif  // FEDMF_COMMON_CRYPTO_INTERNAL_AES256_CTR_KERNEL_H_
