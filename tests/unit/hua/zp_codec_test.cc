#include "common/hua/zp_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/testing/status_matchers.h"

using ::fedmf::testing::StatusIs;

namespace fedmf::hua {
namespace {

TEST(ZpCodec, MaskedSumDecodesToTheSum) {
  const ZpCodec codec = *ZpCodec::Create({});
  random::Csprng rng = random::Csprng::FromSeed(3);
  const std::vector<std::vector<double>> xs = {
      {1.5, -2.25, 1000.0}, {-3.0, 0.125, -999.5}, {1e5, -1e5, 0.0}};
  std::vector<uint64_t> acc(3, 0), masks(3, 0);
  for (const auto& x : xs) {
    std::vector<uint64_t> e = *codec.Encode(x);
    const std::vector<uint64_t> m = ZpCodec::RandomMask(rng, 3);
    ZpCodec::Add(e, m);
    ZpCodec::Add(masks, m);
    ZpCodec::Add(acc, e);
  }
  ZpCodec::Sub(acc, masks);
  const std::vector<double> sum = *codec.DecodeSum(acc, xs.size());
  EXPECT_NEAR(sum[0], 1.5 - 3.0 + 1e5, 1e-6);
  EXPECT_NEAR(sum[1], -2.25 + 0.125 - 1e5, 1e-6);
  EXPECT_NEAR(sum[2], 0.5, 1e-6);
}

TEST(ZpCodec, EncodingOutOfBoundFailsLoudly) {
  const ZpCodec codec = *ZpCodec::Create({});
  EXPECT_EQ(codec.Encode(std::vector<double>{0, 2e6}).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(codec.Encode(std::vector<double>{NAN}).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(ZpCodec, StillMaskedSumFailsToDecode) {
  const ZpCodec codec = *ZpCodec::Create({});
  random::Csprng rng = random::Csprng::FromSeed(4);
  int failures = 0;
  for (int n = 0; n < 200; ++n) {
    std::vector<uint64_t> e = *codec.Encode(std::vector<double>(50, 1.0));
    ZpCodec::Add(e, ZpCodec::RandomMask(rng, 50));
    auto decoded = codec.DecodeSum(e, 1);
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
      ++failures;
    }
  }
  EXPECT_EQ(failures, 200);
}

TEST(ZpCodec, RejectsTooManySummandsAndParametersThatCouldWrap) {
  const ZpCodec codec = *ZpCodec::Create({});
  EXPECT_THAT(codec.DecodeSum(std::vector<uint64_t>{0}, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(codec.DecodeSum(std::vector<uint64_t>{0}, codec.max_summands() + 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // 2^30 * 2^30 * 2^10 = 2^70 > 2^63: the codec refuses.
  EXPECT_THAT(ZpCodec::Create({30, std::ldexp(1.0, 30), 1024}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::hua
