#include "common/crypto/aes_ctr_prg.h"

#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

#include "common/crypto/internal/aes256_ctr_kernel.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/crypto/hex.h"

using ::fedmf::testing::IsOk;

namespace fedmf::crypto {
namespace {

using testing::Hex;
using testing::ToHex;

std::vector<uint8_t> SeedFrom(uint64_t s) {
  std::vector<uint8_t> seed(kPrgSeedBytes);
  random::Csprng rng = random::Csprng::FromSeed(s);
  rng.FillBytes(seed.data(), seed.size());
  return seed;
}

// NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt): the PRG's keystream under the
// given key and initial counter block is exactly CT xor PT.
TEST(AesCtrPrgTest, NistSp80038aF55) {
  const testing::NistCtrAes256Vector v;
  const auto& key = v.key;
  const auto& counter = v.counter;
  const auto& pt = v.plaintext;
  const auto& ct = v.ciphertext;
  ASSERT_EQ(pt.size(), 64u);
  ASSERT_EQ(ct.size(), 64u);

  ASSERT_OK_AND_ASSIGN(auto prg, AesCtrPrg::CreateWithCounter(key, counter));
  std::vector<uint8_t> ks(64);
  ASSERT_THAT(prg.Fill(ks), IsOk());
  std::vector<uint8_t> enc(64);
  for (size_t i = 0; i < 64; ++i) enc[i] = pt[i] ^ ks[i];
  EXPECT_EQ(ToHex(enc), ToHex(ct));

  // Streaming across non-block-aligned calls yields the same keystream.
  ASSERT_OK_AND_ASSIGN(auto prg2, AesCtrPrg::CreateWithCounter(key, counter));
  std::vector<uint8_t> a(5), b(37), c(22);
  ASSERT_TRUE(prg2.Fill(a).ok() && prg2.Fill(b).ok() && prg2.Fill(c).ok());
  std::vector<uint8_t> joined = a;
  joined.insert(joined.end(), b.begin(), b.end());
  joined.insert(joined.end(), c.begin(), c.end());
  EXPECT_EQ(ToHex(joined), ToHex(ks));
}

TEST(AesCtrPrgTest, DefaultStreamStartsAtTheZeroCounter) {
  const auto seed = SeedFrom(1);
  auto a = AesCtrPrg::Create(seed);
  auto b = AesCtrPrg::CreateWithCounter(seed, std::vector<uint8_t>(16, 0));
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<uint8_t> x(1000), y(1000);
  ASSERT_TRUE(a->Fill(x).ok() && b->Fill(y).ok());
  EXPECT_EQ(x, y);
}

// CreateAtBlock(b) is the default stream from byte 16 b on, with either
// engine, including block numbers whose counter carries past a byte.
TEST(AesCtrPrgTest, CreateAtBlockIsTheStreamFromThatBlock) {
  const auto seed = SeedFrom(3);
  auto whole = [&]() {
    auto prg = AesCtrPrg::Create(seed);
    EXPECT_THAT(prg, IsOk());
    std::vector<uint8_t> out(16 * 700);
    EXPECT_THAT(prg->Fill(out), IsOk());
    return out;
  };
  auto from = [&](uint64_t block) {
    auto prg = AesCtrPrg::CreateAtBlock(seed, block);
    EXPECT_THAT(prg, IsOk());
    std::vector<uint8_t> out(16 * (700 - block));
    EXPECT_THAT(prg->Fill(out), IsOk());
    return out;
  };
  for (bool openssl : {false, true}) {
    std::optional<internal::OpenSslAesCtrForTesting> use_openssl;
    if (openssl) use_openssl.emplace();
    const std::vector<uint8_t> stream = whole();
    for (uint64_t block : {0, 1, 255, 256, 257, 512, 699}) {
      EXPECT_EQ(from(block), std::vector<uint8_t>(stream.begin() + 16 * block, stream.end()))
          << "block " << block << (openssl ? " (OpenSSL)" : "");
    }
  }
  // Past 2^64 blocks the counter's high half moves: block 2^64 - 1 then 2^64.
  auto last = AesCtrPrg::CreateAtBlock(seed, ~uint64_t{0});
  std::vector<uint8_t> counter(16, 0);
  counter[7] = 0;
  for (int i = 8; i < 16; ++i) counter[i] = 0xff;
  auto same = AesCtrPrg::CreateWithCounter(seed, counter);
  ASSERT_TRUE(last.ok() && same.ok());
  std::vector<uint8_t> x(48), y(48);
  ASSERT_TRUE(last->Fill(x).ok() && same->Fill(y).ok());
  EXPECT_EQ(x, y);
}

// Mask element i is keystream bytes [8i, 8i+8) little-endian, masked to k bits.
TEST(AesCtrPrgTest, MasksAreLittleEndianKeystreamWordsReduced) {
  const auto seed = SeedFrom(2);
  constexpr size_t kN = 5000;  // crosses the internal 16 KiB chunk boundary
  ASSERT_OK_AND_ASSIGN(auto bytes_prg, AesCtrPrg::Create(seed));
  std::vector<uint8_t> ks(8 * kN);
  ASSERT_THAT(bytes_prg.Fill(ks), IsOk());
  for (int bits : {1, 7, 13, 32, 63, 64}) {
    SCOPED_TRACE(bits);
    ASSERT_OK_AND_ASSIGN(auto masks, ExpandMaskMod2k(seed, kN, bits));
    ASSERT_EQ(masks.size(), kN);
    const uint64_t m = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    for (size_t i = 0; i < kN; ++i) {
      uint64_t w = 0;
      for (int b = 7; b >= 0; --b) w = (w << 8) | ks[8 * i + b];
      ASSERT_EQ((masks)[i], w & m) << i;
    }
  }
}

TEST(AesCtrPrgTest, FillMod2kStreamsLikeOneCall) {
  const auto seed = SeedFrom(3);
  auto whole = ExpandMaskMod2k(seed, 100, 40);
  auto prg = AesCtrPrg::Create(seed);
  ASSERT_TRUE(whole.ok() && prg.ok());
  std::vector<uint64_t> a(33), b(67);
  ASSERT_TRUE(prg->FillMod2k(a, 40).ok() && prg->FillMod2k(b, 40).ok());
  a.insert(a.end(), b.begin(), b.end());
  EXPECT_EQ(a, *whole);
}

TEST(AesCtrPrgTest, DifferentSeedsGiveDifferentMasks) {
  auto a = ExpandMaskMod2k(SeedFrom(4), 64, 64);
  auto b = ExpandMaskMod2k(SeedFrom(5), 64, 64);
  ASSERT_TRUE(a.ok() && b.ok());
  int equal = 0;
  for (size_t i = 0; i < 64; ++i) equal += (*a)[i] == (*b)[i];
  EXPECT_EQ(equal, 0);
}

// Crude uniformity sanity check: every bit position is ~fair.
TEST(AesCtrPrgTest, MaskBitsAreBalanced) {
  constexpr size_t kN = 1 << 16;
  ASSERT_OK_AND_ASSIGN(auto masks, ExpandMaskMod2k(SeedFrom(6), kN, 20));
  for (int bit = 0; bit < 20; ++bit) {
    size_t ones = 0;
    for (uint64_t v : masks) ones += (v >> bit) & 1;
    // 5.5 sigma around kN/2 (sigma = 128).
    EXPECT_NEAR(static_cast<double>(ones), kN / 2.0, 700.0) << bit;
  }
  for (uint64_t v : masks) ASSERT_LT(v, uint64_t{1} << 20);
}

TEST(AesCtrPrgTest, ApplyMaskAddsAndSubtractsTheExpandedMask) {
  const auto seed = SeedFrom(7);
  constexpr size_t kN = 4099;  // not a multiple of the chunk size
  for (int bits : {17, 64}) {
    SCOPED_TRACE(bits);
    const uint64_t m = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    std::vector<uint64_t> x(kN);
    random::Csprng rng = random::Csprng::FromSeed(8);
    for (uint64_t& v : x) v = rng.NextU64() & m;
    ASSERT_OK_AND_ASSIGN(auto mask, ExpandMaskMod2k(seed, kN, bits));

    std::vector<uint64_t> y = x;
    ASSERT_THAT(ApplyMaskMod2k(seed, bits, MaskSign::kAdd, y), IsOk());
    for (size_t i = 0; i < kN; ++i) ASSERT_EQ(y[i], (x[i] + (mask)[i]) & m);
    ASSERT_THAT(ApplyMaskMod2k(seed, bits, MaskSign::kSubtract, y), IsOk());
    EXPECT_EQ(y, x);
  }
}

// AccumulateWords32 adds (subtracts) the little-endian words of the same
// stream Fill reads, also after reads that leave a block half used.
TEST(AesCtrPrgTest, AccumulateWords32AddsTheStreamsWords) {
  const auto seed = SeedFrom(9);
  ASSERT_OK_AND_ASSIGN(auto bytes_prg, AesCtrPrg::Create(seed));
  std::vector<uint8_t> ks(4 * 6000);
  ASSERT_THAT(bytes_prg.Fill(ks), IsOk());
  auto word = [&](size_t i) {
    return static_cast<uint32_t>(ks[4 * i]) | static_cast<uint32_t>(ks[4 * i + 1]) << 8 |
           static_cast<uint32_t>(ks[4 * i + 2]) << 16 | static_cast<uint32_t>(ks[4 * i + 3]) << 24;
  };
  random::Csprng rng = random::Csprng::FromSeed(10);
  std::vector<uint32_t> x(6000);
  for (uint32_t& v : x) v = static_cast<uint32_t>(rng.NextU64());

  ASSERT_OK_AND_ASSIGN(auto prg, AesCtrPrg::Create(seed));
  std::vector<uint32_t> y = x;
  // 7 words leave a block 3/4 used; 2,000 then start inside it; 8 bytes read
  // with Fill; the rest subtracts.
  ASSERT_THAT(prg.AccumulateWords32(std::span<uint32_t>(y).subspan(0, 7), MaskSign::kAdd), IsOk());
  ASSERT_THAT(prg.AccumulateWords32(std::span<uint32_t>(y).subspan(7, 2000), MaskSign::kAdd),
              IsOk());
  std::vector<uint8_t> skipped(8);
  ASSERT_THAT(prg.Fill(skipped), IsOk());
  ASSERT_THAT(prg.AccumulateWords32(std::span<uint32_t>(y).subspan(2009), MaskSign::kSubtract),
              IsOk());
  EXPECT_EQ(ToHex(skipped),
            ToHex(std::vector<uint8_t>(ks.begin() + 4 * 2007, ks.begin() + 4 * 2009)));
  for (size_t i = 0; i < 2007; ++i) ASSERT_EQ(y[i], x[i] + word(i)) << i;
  for (size_t i = 2007; i < 2009; ++i) ASSERT_EQ(y[i], x[i]) << i;
  for (size_t i = 2009; i < 6000; ++i) ASSERT_EQ(y[i], x[i] - word(i)) << i;
}

// Both engines (the VAES kernel where the CPU has it, OpenSSL) give the same
// stream through every reader, across reads that end mid-block.
TEST(AesCtrPrgTest, KernelAndOpenSslGiveTheSameStream) {
  // Without VAES both reads run on OpenSSL: still the same stream.
  const auto seed = SeedFrom(11);
  auto read = [&]() {
    auto prg = AesCtrPrg::Create(seed);
    EXPECT_THAT(prg, IsOk());
    std::vector<uint8_t> a(5), b(4099);
    std::vector<uint64_t> c(333);
    std::vector<uint32_t> d(1001, 7), e(2048, 9);
    EXPECT_TRUE(prg->Fill(a).ok() && prg->Fill(b).ok() && prg->FillMod2k(c, 40).ok() &&
                prg->AccumulateWords32(d, MaskSign::kAdd).ok() &&
                prg->AccumulateWords32(e, MaskSign::kSubtract).ok());
    return std::make_tuple(a, b, c, d, e);
  };
  const auto kernel = read();
  internal::OpenSslAesCtrForTesting openssl;
  EXPECT_EQ(read(), kernel);
}

TEST(AesCtrPrgTest, RejectsBadArguments) {
  EXPECT_EQ(AesCtrPrg::Create(std::vector<uint8_t>(31)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AesCtrPrg::Create(std::vector<uint8_t>(16)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AesCtrPrg::CreateWithCounter(std::vector<uint8_t>(32), std::vector<uint8_t>(12))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  const auto seed = SeedFrom(9);
  EXPECT_EQ(ExpandMaskMod2k(seed, 4, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExpandMaskMod2k(seed, 4, 65).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<uint64_t> acc(4);
  EXPECT_EQ(ApplyMaskMod2k(seed, -1, MaskSign::kAdd, acc).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ApplyMaskMod2k(std::vector<uint8_t>(3), 32, MaskSign::kAdd, acc).code(),
            absl::StatusCode::kInvalidArgument);
  // Empty outputs are fine.
  EXPECT_THAT(ExpandMaskMod2k(seed, 0, 32), IsOk());
}

}  // namespace
}  // namespace fedmf::crypto
