#include "common/crypto/internal/aes256_ctr_kernel.h"

#include <openssl/evp.h>

#include <cstdint>
#include <vector>

#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/unit/crypto/hex.h"

namespace fedmf::crypto::internal {
namespace {

using testing::Hex;
using testing::ToHex;

// OpenSSL's AES-256-CTR keystream: the reference the kernel must equal.
std::vector<uint8_t> OpenSslKeystream(const std::vector<uint8_t>& key,
                                      const std::vector<uint8_t>& counter, size_t bytes) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::vector<uint8_t> zeros(bytes, 0), out(bytes);
  int len = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nullptr, key.data(), counter.data()), 1);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &len, zeros.data(), static_cast<int>(bytes)), 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

CounterBlock FromBytes(const std::vector<uint8_t>& b) {
  CounterBlock c;
  for (size_t i = 0; i < 8; ++i) {
    c.high = (c.high << 8) | b[i];
    c.low = (c.low << 8) | b[8 + i];
  }
  return c;
}

std::vector<uint8_t> ToBytes(CounterBlock c) {
  std::vector<uint8_t> b(16);
  for (int i = 7; i >= 0; --i, c.high >>= 8, c.low >>= 8) {
    b[i] = static_cast<uint8_t>(c.high);
    b[8 + i] = static_cast<uint8_t>(c.low);
  }
  return b;
}

std::vector<uint8_t> KernelKeystream(const std::vector<uint8_t>& key, CounterBlock* counter,
                                     size_t blocks) {
  Aes256RoundKeys keys;
  ExpandAes256Key(key.data(), &keys);
  std::vector<uint8_t> out(16 * blocks);
  Aes256CtrKeystream(keys, counter, blocks, out.data());
  return out;
}

// On a CPU without the kernel's instructions nothing here may call it; what
// holds there is that no stream uses it (AesCtrPrg's tests cover OpenSSL).
class Aes256CtrKernelTest : public ::testing::Test {
 protected:
  bool KernelRunsHere() const {
    if (Aes256CtrKernelAvailable()) return true;
    EXPECT_FALSE(UseAes256CtrKernel()) << "no VAES, AVX2 or AES-NI here, yet the kernel is chosen";
    return false;
  }
};

TEST_F(Aes256CtrKernelTest, NistSp80038aF55) {
  if (!KernelRunsHere()) return;
  const testing::NistCtrAes256Vector v;
  CounterBlock counter = FromBytes(v.counter);
  const auto ks = KernelKeystream(v.key, &counter, 4);
  std::vector<uint8_t> enc(64);
  for (size_t i = 0; i < 64; ++i) enc[i] = v.plaintext[i] ^ ks[i];
  EXPECT_EQ(ToHex(enc), ToHex(v.ciphertext));
  EXPECT_EQ(ToHex(ToBytes(counter)), "f0f1f2f3f4f5f6f7f8f9fafbfcfdff03");
}

// Random keys, every length around the 16-block step, and counters whose low
// half (or the whole block) wraps inside the stream: OpenSSL carries through
// all 128 bits, so must the kernel.
TEST_F(Aes256CtrKernelTest, EqualsOpenSslForRandomKeysLengthsAndCounters) {
  if (!KernelRunsHere()) return;
  random::Csprng rng = random::Csprng::FromSeed(11);
  const std::vector<CounterBlock> starts = {
      {0, 0},
      {0x0123456789abcdefULL, 0x0fedcba987654321ULL},
      {7, ~uint64_t{0} - 5},             // low half wraps after 6 blocks
      {7, ~uint64_t{0}},                 // ... after 1
      {~uint64_t{0}, ~uint64_t{0} - 2},  // the whole block wraps to 0
  };
  for (const CounterBlock& start : starts) {
    for (size_t blocks : {1u, 2u, 3u, 15u, 16u, 17u, 31u, 32u, 33u, 100u, 8410u}) {
      std::vector<uint8_t> key(32);
      rng.FillBytes(key.data(), key.size());
      SCOPED_TRACE(::testing::Message()
                   << "counter " << ToHex(ToBytes(start)) << ", " << blocks << " blocks");
      CounterBlock counter = start;
      const auto got = KernelKeystream(key, &counter, blocks);
      const auto want = OpenSslKeystream(key, ToBytes(start), 16 * blocks);
      ASSERT_EQ(ToHex(got), ToHex(want));
      // The counter ends where OpenSSL's stream would continue.
      CounterBlock expected_next = start;
      expected_next.low += blocks;
      if (expected_next.low < start.low) ++expected_next.high;
      EXPECT_EQ(ToHex(ToBytes(counter)), ToHex(ToBytes(expected_next)));
    }
  }
}

// Accumulate32 adds (or subtracts) the keystream's little-endian words and
// leaves the counter where the keystream would.
TEST_F(Aes256CtrKernelTest, Accumulate32AddsTheKeystreamWords) {
  if (!KernelRunsHere()) return;
  std::vector<uint8_t> key(32);
  random::Csprng rng = random::Csprng::FromSeed(12);
  rng.FillBytes(key.data(), key.size());
  Aes256RoundKeys keys;
  ExpandAes256Key(key.data(), &keys);
  for (bool subtract : {false, true}) {
    for (size_t blocks : {1u, 16u, 37u, 8410u}) {
      SCOPED_TRACE(::testing::Message() << blocks << " blocks, subtract " << subtract);
      const CounterBlock start{3, ~uint64_t{0} - 20};  // the low half wraps inside
      CounterBlock stream_counter = start;
      std::vector<uint8_t> ks(16 * blocks);
      Aes256CtrKeystream(keys, &stream_counter, blocks, ks.data());
      std::vector<uint32_t> x(4 * blocks);
      for (uint32_t& v : x) v = static_cast<uint32_t>(rng.NextU64());
      std::vector<uint32_t> y = x;
      CounterBlock counter = start;
      Aes256CtrAccumulate32(keys, &counter, blocks, subtract, y.data());
      for (size_t i = 0; i < x.size(); ++i) {
        const uint32_t w =
            static_cast<uint32_t>(ks[4 * i]) | static_cast<uint32_t>(ks[4 * i + 1]) << 8 |
            static_cast<uint32_t>(ks[4 * i + 2]) << 16 | static_cast<uint32_t>(ks[4 * i + 3]) << 24;
        ASSERT_EQ(y[i], subtract ? x[i] - w : x[i] + w) << i;
      }
      EXPECT_EQ(counter.high, stream_counter.high);
      EXPECT_EQ(counter.low, stream_counter.low);
    }
  }
}

// Writes exactly 16 * blocks bytes: the step's discarded blocks stay inside.
TEST_F(Aes256CtrKernelTest, WritesNothingPastTheLastBlock) {
  if (!KernelRunsHere()) return;
  const std::vector<uint8_t> key(32, 0x5a);
  for (size_t blocks : {1u, 5u, 16u, 19u}) {
    Aes256RoundKeys keys;
    ExpandAes256Key(key.data(), &keys);
    std::vector<uint8_t> out(16 * blocks + 64, 0xee);
    CounterBlock counter;
    Aes256CtrKeystream(keys, &counter, blocks, out.data());
    for (size_t i = 16 * blocks; i < out.size(); ++i) ASSERT_EQ(out[i], 0xee) << blocks << " " << i;
  }
}

}  // namespace
}  // namespace fedmf::crypto::internal
