// The primitives composed the way secure aggregation composes them (no
// protocol, no dropouts): X25519 + HKDF pairwise seeds, AES-CTR masks in
// Z_{2^k}, fixed-point inputs. Pairwise masks must cancel and self masks must
// come off exactly, leaving the exact fixed-point sum.
#include <vector>

#include "common/crypto/aes_ctr_prg.h"
#include "common/crypto/fixed_point.h"
#include "common/crypto/hkdf.h"
#include "common/crypto/x25519.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::crypto {
namespace {

TEST(SecureAggregationMathTest, MasksCancelAndTheSumDecodesExactly) {
  constexpr int kParties = 5;
  constexpr size_t kDim = 3000;
  constexpr int kBits = 40;
  auto codec = FixedPointCodec::Create(kBits, 16, 8.0, kParties);
  ASSERT_THAT(codec, IsOk());
  random::Csprng rng = random::Csprng::FromSeed(2017);

  std::vector<X25519PrivateKey> keys;
  for (int i = 0; i < kParties; ++i) {
    ASSERT_OK_AND_ASSIGN(auto k, X25519PrivateKey::Generate(rng));
    keys.push_back(std::move(k));
  }
  const std::vector<uint8_t> info = {'p', 'r', 'g'};

  std::vector<uint64_t> server_sum(kDim, 0);
  std::vector<double> true_sum(kDim, 0.0);
  std::vector<std::vector<uint8_t>> self_seeds;
  for (int i = 0; i < kParties; ++i) {
    std::vector<double> x(kDim);
    for (size_t d = 0; d < kDim; ++d) {
      x[d] = (2 * rng.NextDouble() - 1) * 8.0;
      true_sum[d] += codec->DecodeSum(*codec->Encode(x[d]));
    }
    ASSERT_OK_AND_ASSIGN(auto y, codec->EncodeVector(x));
    std::vector<uint8_t> b(kPrgSeedBytes);
    rng.FillBytes(b.data(), b.size());
    ASSERT_THAT(ApplyMaskMod2k(b, kBits, MaskSign::kAdd, y), IsOk());
    self_seeds.push_back(b);
    for (int j = 0; j < kParties; ++j) {
      if (j == i) continue;
      ASSERT_OK_AND_ASSIGN(auto shared, keys[i].Agree(keys[j].public_key()));
      ASSERT_OK_AND_ASSIGN(auto seed, HkdfSha256(shared.span(), {}, info, kPrgSeedBytes));
      ASSERT_TRUE(
          ApplyMaskMod2k(seed.span(), kBits, i < j ? MaskSign::kAdd : MaskSign::kSubtract, y).ok());
    }
    ASSERT_THAT(AddMod2k(server_sum, y, kBits), IsOk());
  }
  for (const auto& b : self_seeds) {
    ASSERT_THAT(ApplyMaskMod2k(b, kBits, MaskSign::kSubtract, server_sum), IsOk());
  }
  for (size_t d = 0; d < kDim; ++d) {
    ASSERT_DOUBLE_EQ(codec->DecodeSum(server_sum[d]), true_sum[d]) << d;
  }
}

}  // namespace
}  // namespace fedmf::crypto
