#include "common/crypto/internal/aes256_ctr_kernel.h"

#include <openssl/crypto.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace fedmf::crypto::internal {
namespace {

std::atomic<int> openssl_for_testing{0};  // live OpenSslAesCtrForTesting objects

}  // namespace

bool UseAes256CtrKernel() {
  return Aes256CtrKernelAvailable() && openssl_for_testing.load(std::memory_order_relaxed) == 0;
}

OpenSslAesCtrForTesting::OpenSslAesCtrForTesting() { openssl_for_testing.fetch_add(1); }
OpenSslAesCtrForTesting::~OpenSslAesCtrForTesting() { openssl_for_testing.fetch_sub(1); }

#if defined(__x86_64__)
namespace {

#define FEDMF_TARGET_AES __attribute__((target("aes,sse4.1")))
#define FEDMF_TARGET_VAES __attribute__((target("aes,avx2,vaes")))

// FIPS-197 key expansion, two words at a time: w[i] = w[i-8] xor f(w[i-1]),
// so each new round key is the prefix xor of the key two rounds back, xored
// with f of the last word of the previous round key (broadcast).
FEDMF_TARGET_AES inline __m128i PrefixXor(__m128i a) {
  a = _mm_xor_si128(a, _mm_slli_si128(a, 4));
  a = _mm_xor_si128(a, _mm_slli_si128(a, 8));
  return a;
}

// Round key 2r + 2 from round keys 2r and 2r + 1: f = RotWord(SubWord(.)) xor
// rcon (aeskeygenassist's dword 3).
template <int kRcon>
FEDMF_TARGET_AES inline __m128i EvenRoundKey(__m128i two_back, __m128i previous) {
  const __m128i f = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(previous, kRcon), 0xff);
  return _mm_xor_si128(PrefixXor(two_back), f);
}

// Round key 2r + 3 from round keys 2r + 1 and 2r + 2: f = SubWord(.) without
// rotation or rcon (dword 2), AES-256's extra step at i mod 8 = 4.
FEDMF_TARGET_AES inline __m128i OddRoundKey(__m128i two_back, __m128i previous) {
  const __m128i f = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(previous, 0), 0xaa);
  return _mm_xor_si128(PrefixXor(two_back), f);
}

// Per 128-bit lane: a little-endian 128-bit number <-> its big-endian bytes.
FEDMF_TARGET_VAES inline __m256i ByteReverseLanes(__m256i x) {
  const __m256i reverse = _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,  //
                                           15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  return _mm256_shuffle_epi8(x, reverse);
}

constexpr size_t kLanes = 8;                   // registers in flight: covers vaesenc's latency
constexpr size_t kBlocksPerStep = 2 * kLanes;  // two blocks per register

// The keystream of the kBlocksPerStep consecutive counters in `counters`
// (low, low + 1, ..., same high half), into ks; advances `counters`. Counters past a
// wrap of the low half may be computed, for the caller to discard.
FEDMF_TARGET_VAES inline void Step(const __m256i* round_keys, __m256i* counters,
                                   __m256i ks[kLanes]) {
  const __m256i advance = _mm256_setr_epi64x(kBlocksPerStep, 0, kBlocksPerStep, 0);
  for (size_t j = 0; j < kLanes; ++j) {
    ks[j] = _mm256_xor_si256(ByteReverseLanes(counters[j]), _mm256_load_si256(&round_keys[0]));
    counters[j] = _mm256_add_epi64(counters[j], advance);
  }
  for (int r = 1; r < 14; ++r) {
    const __m256i k = _mm256_load_si256(&round_keys[r]);
    for (size_t j = 0; j < kLanes; ++j) ks[j] = _mm256_aesenc_epi128(ks[j], k);
  }
  const __m256i last = _mm256_load_si256(&round_keys[14]);
  for (size_t j = 0; j < kLanes; ++j) ks[j] = _mm256_aesenclast_epi128(ks[j], last);
}

// Where a run's keystream goes: Whole takes one step's registers, Partial the
// first `blocks` blocks of the last step (in memory); both move on past what
// they took, since a stream split at a wrap continues in the same sink.
struct StoreSink {
  uint8_t* out;
  FEDMF_TARGET_VAES void Whole(const __m256i ks[kLanes]) {
    uint8_t* const at = out;  // a local: the stores cannot alias it
    for (size_t j = 0; j < kLanes; ++j) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 32 * j), ks[j]);
    }
    out = at + 16 * kBlocksPerStep;
  }
  void Partial(const uint8_t* ks, size_t blocks) {
    std::memcpy(out, ks, 16 * blocks);
    out += 16 * blocks;
  }
};

template <bool kSubtract>
struct AccumulateSink {
  uint32_t* sum;
  FEDMF_TARGET_VAES void Whole(const __m256i ks[kLanes]) {
    uint32_t* const words = sum;  // a local: the stores cannot alias it
    for (size_t j = 0; j < kLanes; ++j) {
      auto* at = reinterpret_cast<__m256i*>(words + 8 * j);
      const __m256i s = _mm256_loadu_si256(at);
      _mm256_storeu_si256(at, kSubtract ? _mm256_sub_epi32(s, ks[j]) : _mm256_add_epi32(s, ks[j]));
    }
    sum = words + 4 * kBlocksPerStep;
  }
  void Partial(const uint8_t* ks, size_t blocks) {
    for (size_t i = 0; i < 4 * blocks; ++i) {
      uint32_t w;
      std::memcpy(&w, ks + 4 * i, 4);  // x86: the little-endian word
      sum[i] = kSubtract ? sum[i] - w : sum[i] + w;
    }
    sum += 4 * blocks;
  }
};

// The keystream of `blocks` counters from (high, low), low + blocks - 1 not
// wrapping, into `sink`.
template <typename Sink>
FEDMF_TARGET_VAES void RunWithoutWrap(const Aes256RoundKeys& keys, uint64_t high, uint64_t low,
                                      size_t blocks, Sink& sink) {
  const auto* round_keys = reinterpret_cast<const __m256i*>(keys.bytes);
  __m256i counters[kLanes];
  for (size_t j = 0; j < kLanes; ++j) {
    counters[j] =
        _mm256_setr_epi64x(static_cast<long long>(low + 2 * j), static_cast<long long>(high),
                           static_cast<long long>(low + 2 * j + 1), static_cast<long long>(high));
  }
  __m256i ks[kLanes];
  for (size_t s = 0; s < blocks / kBlocksPerStep; ++s) {
    Step(round_keys, counters, ks);
    sink.Whole(ks);
  }
  if (const size_t rest = blocks % kBlocksPerStep; rest > 0) {
    Step(round_keys, counters, ks);
    alignas(32) uint8_t tail[16 * kBlocksPerStep];
    StoreSink{tail}.Whole(ks);
    sink.Partial(tail, rest);
    OPENSSL_cleanse(tail, sizeof(tail));
  }
}

// Splits the stream where the low half wraps, and advances *counter.
template <typename Sink>
void Run(const Aes256RoundKeys& keys, CounterBlock* counter, size_t blocks, Sink& sink) {
  while (blocks > 0) {
    // Counters low, ..., low + run - 1 stay below 2^64.
    const uint64_t room = ~uint64_t{0} - counter->low;  // further blocks before the wrap
    const size_t run = room < blocks - 1 ? static_cast<size_t>(room) + 1 : blocks;
    RunWithoutWrap(keys, counter->high, counter->low, run, sink);
    const uint64_t before = counter->low;
    counter->low += run;
    if (counter->low < before) ++counter->high;  // the run ended at the wrap: carry
    blocks -= run;
  }
}

// CPUID directly: GCC's __builtin_cpu_supports knows "vaes", clang 14's
// does not.
bool DetectKernel() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool aes = (c & bit_AES) != 0;
  const bool osxsave = (c & bit_OSXSAVE) != 0;
  if (!aes || !osxsave) return false;
  // The OS saves the SSE and AVX (YMM) register state.
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6) != 0x6) return false;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  const bool avx2 = (b & bit_AVX2) != 0;
  const bool vaes = (c & (1u << 9)) != 0;  // CPUID.(EAX=7,ECX=0):ECX.VAES[bit 9]
  return avx2 && vaes;
}

}  // namespace

bool Aes256CtrKernelAvailable() {
  static const bool available = DetectKernel();
  return available;
}

FEDMF_TARGET_AES void ExpandAes256Key(const uint8_t key[32], Aes256RoundKeys* out) {
  __m128i rk[15];
  rk[0] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  rk[1] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key + 16));
  rk[2] = EvenRoundKey<0x01>(rk[0], rk[1]);
  rk[3] = OddRoundKey(rk[1], rk[2]);
  rk[4] = EvenRoundKey<0x02>(rk[2], rk[3]);
  rk[5] = OddRoundKey(rk[3], rk[4]);
  rk[6] = EvenRoundKey<0x04>(rk[4], rk[5]);
  rk[7] = OddRoundKey(rk[5], rk[6]);
  rk[8] = EvenRoundKey<0x08>(rk[6], rk[7]);
  rk[9] = OddRoundKey(rk[7], rk[8]);
  rk[10] = EvenRoundKey<0x10>(rk[8], rk[9]);
  rk[11] = OddRoundKey(rk[9], rk[10]);
  rk[12] = EvenRoundKey<0x20>(rk[10], rk[11]);
  rk[13] = OddRoundKey(rk[11], rk[12]);
  rk[14] = EvenRoundKey<0x40>(rk[12], rk[13]);
  for (int r = 0; r < 15; ++r) {
    _mm_store_si128(reinterpret_cast<__m128i*>(out->bytes[r]), rk[r]);
    _mm_store_si128(reinterpret_cast<__m128i*>(out->bytes[r] + 16), rk[r]);
  }
  OPENSSL_cleanse(rk, sizeof(rk));
}

void Aes256CtrKeystream(const Aes256RoundKeys& keys, CounterBlock* counter, size_t blocks,
                        uint8_t* out) {
  StoreSink sink{out};
  Run(keys, counter, blocks, sink);
}

void Aes256CtrAccumulate32(const Aes256RoundKeys& keys, CounterBlock* counter, size_t blocks,
                           bool subtract, uint32_t* sum) {
  if (subtract) {
    AccumulateSink<true> sink{sum};
    Run(keys, counter, blocks, sink);
  } else {
    AccumulateSink<false> sink{sum};
    Run(keys, counter, blocks, sink);
  }
}

#else  // not x86-64: no kernel, OpenSSL runs every stream

bool Aes256CtrKernelAvailable() { return false; }
// Never called: callers check Aes256CtrKernelAvailable() first.
void ExpandAes256Key(const uint8_t*, Aes256RoundKeys*) { std::abort(); }
void Aes256CtrKeystream(const Aes256RoundKeys&, CounterBlock*, size_t, uint8_t*) { std::abort(); }
void Aes256CtrAccumulate32(const Aes256RoundKeys&, CounterBlock*, size_t, bool, uint32_t*) {
  std::abort();
}

#endif

}  // namespace fedmf::crypto::internal
