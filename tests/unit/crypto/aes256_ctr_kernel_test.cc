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

class Aes256CtrKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Aes256CtrKernelAvailable()) {
      GTEST_SKIP() << "this CPU has no VAES (or no AVX2/AES-NI): the kernel is never used here, "
                      "AesCtrPrg runs on OpenSSL";
    }
  }
};

// NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt): keystream = CT xor PT.
TEST_F(Aes256CtrKernelTest, NistSp80038aF55) {
  const auto key = Hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
  const auto pt =
      Hex("6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
          "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710");
  const auto ct =
      Hex("601ec313775789a5b7a7f504bbf3d228 f443e3ca4d62b59aca84e990cacaf5c5"
          "2b0930daa23de94ce87017ba2d84988d dfc9c58db67aada613c2dd08457941a6");
  CounterBlock counter = FromBytes(Hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"));
  const auto ks = KernelKeystream(key, &counter, 4);
  std::vector<uint8_t> enc(64);
  for (size_t i = 0; i < 64; ++i) enc[i] = pt[i] ^ ks[i];
  EXPECT_EQ(ToHex(enc), ToHex(ct));
  EXPECT_EQ(ToHex(ToBytes(counter)), "f0f1f2f3f4f5f6f7f8f9fafbfcfdff03");
}

// Random keys, every length around the 16-block step, and counters whose low
// half (or the whole block) wraps inside the stream: OpenSSL carries through
// all 128 bits, so must the kernel.
TEST_F(Aes256CtrKernelTest, EqualsOpenSslForRandomKeysLengthsAndCounters) {
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
