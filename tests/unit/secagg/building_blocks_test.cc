// The pieces every party must compute identically: mask expansion, key
// derivation, the share-bundle format.
#include <cstdint>
#include <vector>

#include "common/crypto/aes_ctr_prg.h"
#include "common/crypto/shamir.h"
#include "common/crypto/x25519.h"
#include "common/random/csprng.h"
#include "common/secagg/key_derivation.h"
#include "common/secagg/mask.h"
#include "common/secagg/share_bundle.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::secagg {
namespace {

std::vector<uint8_t> Seed(uint64_t s) {
  std::vector<uint8_t> seed(32);
  random::Csprng::FromSeed(s).FillBytes(seed.data(), seed.size());
  return seed;
}

TEST(MaskTest, StreamDefinition) {
  const auto seed = Seed(1);
  constexpr size_t kN = 10000;  // more than one 4096-word block
  // bits <= 32: 4 keystream bytes per element, little-endian.
  std::vector<uint8_t> ks(4 * kN);
  ASSERT_OK_AND_ASSIGN(auto prg, crypto::AesCtrPrg::Create(seed));
  ASSERT_THAT(prg.Fill(ks), IsOk());
  for (int bits : {1, 17, 32}) {
    std::vector<uint64_t> acc(kN, 0);
    ASSERT_THAT(ApplyMask(seed, bits, crypto::MaskSign::kAdd, acc), IsOk());
    for (size_t i = 0; i < kN; i += 997) {
      const uint64_t w = uint64_t{ks[4 * i]} | uint64_t{ks[4 * i + 1]} << 8 |
                         uint64_t{ks[4 * i + 2]} << 16 | uint64_t{ks[4 * i + 3]} << 24;
      EXPECT_EQ(acc[i], w & ((uint64_t{1} << bits) - 1)) << bits << " " << i;
    }
  }
  // bits > 32: exactly crypto's 8-byte stream.
  std::vector<uint64_t> acc(kN, 0);
  ASSERT_THAT(ApplyMask(seed, 48, crypto::MaskSign::kAdd, acc), IsOk());
  EXPECT_EQ(acc, *crypto::ExpandMaskMod2k(seed, kN, 48));
}

// The fused kernel is exactly one ApplyMask per term, at every width and at
// lengths around its block size.
TEST(MaskTest, ApplyMasksEqualsOneApplyMaskPerTerm) {
  for (int bits : {1, 17, 32, 33, 64}) {
    for (size_t n : {size_t{1}, size_t{2047}, size_t{2048}, size_t{5000}}) {
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      std::vector<uint64_t> start(n);
      for (size_t i = 0; i < n; ++i) start[i] = (i * 0x9E3779B97F4A7C15ull) & mask;
      std::vector<std::vector<uint8_t>> seeds;
      std::vector<MaskTerm> terms;
      for (int t = 0; t < 5; ++t) seeds.push_back(Seed(10 + t));
      std::vector<uint64_t> one_by_one = start;
      for (int t = 0; t < 5; ++t) {
        const crypto::MaskSign sign = t % 2 ? crypto::MaskSign::kSubtract : crypto::MaskSign::kAdd;
        terms.push_back({seeds[t], sign});
        ASSERT_THAT(ApplyMask(seeds[t], bits, sign, one_by_one), IsOk());
      }
      std::vector<uint64_t> fused = start;
      ASSERT_THAT(ApplyMasks(terms, bits, fused), IsOk());
      EXPECT_EQ(fused, one_by_one) << "bits " << bits << " n " << n;
      if (n > 1) {  // one 1-bit element may well come out unchanged
        EXPECT_NE(fused, start);
      }
    }
  }
  std::vector<uint64_t> acc(4);
  const std::vector<uint8_t> seed = Seed(1);  // a term's span must outlive the call
  std::vector<MaskTerm> bad = {{seed, crypto::MaskSign::kAdd}};
  EXPECT_THAT(ApplyMasks(bad, 0, acc), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::vector<uint8_t> short_seed(16);
  bad.push_back({short_seed, crypto::MaskSign::kAdd});
  EXPECT_THAT(ApplyMasks(bad, 32, acc), StatusIs(absl::StatusCode::kInvalidArgument));
}

// Split among threads, the vector gets the same masks: parts start at
// block boundaries of every keystream, the last part is shorter.
TEST(MaskTest, ApplyMasksOnThreadsEqualsOneThread) {
  for (int bits : {17, 32, 64}) {
    for (size_t n : {size_t{8191}, size_t{16384}, size_t{40000}, size_t{65537}}) {
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      std::vector<uint64_t> start(n);
      for (size_t i = 0; i < n; ++i) start[i] = (i * 0x9E3779B97F4A7C15ull) & mask;
      std::vector<std::vector<uint8_t>> seeds;
      std::vector<MaskTerm> terms;
      for (int t = 0; t < 3; ++t) seeds.push_back(Seed(20 + t));
      for (int t = 0; t < 3; ++t) {
        terms.push_back({seeds[t], t == 1 ? crypto::MaskSign::kSubtract : crypto::MaskSign::kAdd});
      }
      std::vector<uint64_t> one = start;
      ASSERT_THAT(ApplyMasks(terms, bits, one, 1), IsOk());
      for (int threads : {2, 3, 8}) {
        std::vector<uint64_t> many = start;
        ASSERT_THAT(ApplyMasks(terms, bits, many, threads), IsOk());
        EXPECT_EQ(many, one) << "bits " << bits << " n " << n << " threads " << threads;
      }
    }
  }
}

TEST(MaskTest, AddThenSubtractIsIdentity) {
  for (int bits : {8, 32, 33, 64}) {
    std::vector<uint64_t> acc(777);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = (i * 12345) & mask;
    const auto orig = acc;
    ASSERT_THAT(ApplyMask(Seed(2), bits, crypto::MaskSign::kAdd, acc), IsOk());
    EXPECT_NE(acc, orig);
    ASSERT_THAT(ApplyMask(Seed(2), bits, crypto::MaskSign::kSubtract, acc), IsOk());
    EXPECT_EQ(acc, orig);
  }
  std::vector<uint64_t> acc(4);
  EXPECT_THAT(ApplyMask(Seed(3), 0, crypto::MaskSign::kAdd, acc),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ApplyMask(std::vector<uint8_t>(16), 32, crypto::MaskSign::kAdd, acc),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(KeyDerivationTest, BothEndsAgreeAndLabelsSeparate) {
  random::Csprng rng = random::Csprng::FromSeed(4);
  auto a = *crypto::X25519PrivateKey::Generate(rng);
  auto b = *crypto::X25519PrivateKey::Generate(rng);
  auto ab = DeriveChannelKeys(a, b.public_key(), 7, 100, 200);
  auto ba = DeriveChannelKeys(b, a.public_key(), 7, 200, 100);
  ASSERT_TRUE(ab.ok() && ba.ok());
  EXPECT_TRUE(ab->send == ba->receive);
  EXPECT_TRUE(ab->receive == ba->send);
  EXPECT_FALSE(ab->send == ab->receive);  // directional
  auto s_ab = DeriveMaskSeed(a, b.public_key(), 7, 100, 200);
  auto s_ba = DeriveMaskSeed(b, a.public_key(), 7, 200, 100);
  ASSERT_TRUE(s_ab.ok() && s_ba.ok());
  EXPECT_TRUE(*s_ab == *s_ba);      // symmetric, as the server needs
  EXPECT_FALSE(*s_ab == ab->send);  // one agreement never keys two primitives
  auto other_round = DeriveMaskSeed(a, b.public_key(), 8, 100, 200);
  EXPECT_FALSE(*s_ab == *other_round);  // fresh per aggregation
  // Low-order peer keys are refused rather than yielding a known secret.
  EXPECT_THAT(DeriveMaskSeed(a, crypto::X25519PublicKey{}, 7, 1, 2),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // The commitment binds the owner and the aggregation.
  const auto bseed = Seed(5);
  EXPECT_NE(*CommitSelfMaskSeed(bseed, 7, 1), *CommitSelfMaskSeed(bseed, 7, 2));
  EXPECT_NE(*CommitSelfMaskSeed(bseed, 7, 1), *CommitSelfMaskSeed(bseed, 8, 1));
  EXPECT_NE(ShareBundleAad(7, 1, 2), ShareBundleAad(7, 2, 1));
}

TEST(ShareBundleTest, RoundTripAndStrictSizes) {
  random::Csprng rng = random::Csprng::FromSeed(6);
  const auto s1 = Seed(7), s2 = Seed(8);
  auto a = crypto::ShamirSplit(s1, 2, 3, rng);
  auto b = crypto::ShamirSplit(s2, 2, 3, rng);
  ASSERT_TRUE(a.ok() && b.ok());
  const ShareBundle bundle{11, 22, (*a)[1], (*b)[1]};
  const crypto::SecretBytes bytes = EncodeShareBundle(bundle);
  EXPECT_EQ(bytes.size(), kShareBundleBytes);
  ASSERT_OK_AND_ASSIGN(auto back, DecodeShareBundle(bytes.span()));
  EXPECT_EQ(back.owner, 11u);
  EXPECT_EQ(back.holder, 22u);
  EXPECT_EQ(back.s_sk_share, (*a)[1]);
  EXPECT_EQ(back.b_share, (*b)[1]);
  std::vector<uint8_t> v(bytes.span().begin(), bytes.span().end());
  v.pop_back();
  EXPECT_THAT(DecodeShareBundle(v), StatusIs(absl::StatusCode::kInvalidArgument));
  // A share of a secret of another size is refused.
  auto odd = crypto::ShamirSplit(std::vector<uint8_t>(31, 1), 2, 3, rng);
  EXPECT_THAT(ParseSecretShare(crypto::SerializeShamirShare((*odd)[0])),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::secagg

namespace fedmf::secagg {
namespace {

TEST(KeyDerivationTest, LowOrderKeysAreRecognisedAndReallyAreLowOrder) {
  random::Csprng rng = random::Csprng::FromSeed(9);
  auto sk = *crypto::X25519PrivateKey::Generate(rng);
  crypto::X25519PublicKey p_minus_1{};
  p_minus_1.fill(0xff);
  p_minus_1[0] = 0xec;
  p_minus_1[31] = 0x7f;
  crypto::X25519PublicKey one{};
  one[0] = 1;
  crypto::X25519PublicKey order8 = {0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae,
                                    0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
                                    0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd,
                                    0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00};
  for (crypto::X25519PublicKey k : {crypto::X25519PublicKey{}, one, p_minus_1, order8}) {
    EXPECT_TRUE(IsLowOrderX25519Key(k));
    EXPECT_THAT(sk.Agree(k),
                StatusIs(absl::StatusCode::kInvalidArgument));  // OpenSSL agrees it is degenerate
    k[31] |= 0x80;                                              // bit 255 is ignored by X25519
    EXPECT_TRUE(IsLowOrderX25519Key(k));
    EXPECT_THAT(sk.Agree(k), StatusIs(absl::StatusCode::kInvalidArgument));
  }
  for (int i = 0; i < 100; ++i) {
    auto other = *crypto::X25519PrivateKey::Generate(rng);
    EXPECT_FALSE(IsLowOrderX25519Key(other.public_key()));
  }
}

}  // namespace
}  // namespace fedmf::secagg
