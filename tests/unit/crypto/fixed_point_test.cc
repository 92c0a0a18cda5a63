#include "common/crypto/fixed_point.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::crypto {
namespace {

TEST(FixedPointTest, CreateEnforcesTheNoWrapCondition) {
  // k=32, f=16, B=1: M = 2^16, so N * 2^16 < 2^31 <=> N < 2^15.
  EXPECT_THAT(FixedPointCodec::Create(32, 16, 1.0, 32767), IsOk());
  EXPECT_EQ(FixedPointCodec::Create(32, 16, 1.0, 32768).status().code(),
            absl::StatusCode::kInvalidArgument);
  // M = ceil(B * 2^f) (conservative): k=12, f=0, B=10.2 gives M=11, so
  // N * 11 < 2^11 <=> N <= 186.
  EXPECT_EQ(FixedPointCodec::Create(12, 0, 10.2, 186)->max_encoded_magnitude(), 11u);
  EXPECT_THAT(FixedPointCodec::Create(12, 0, 10.2, 187),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // k=64 edge: M * N must stay below 2^63.
  EXPECT_THAT(FixedPointCodec::Create(64, 20, 1024.0, (uint64_t{1} << 33) - 1), IsOk());
  EXPECT_THAT(FixedPointCodec::Create(64, 20, 1024.0, uint64_t{1} << 33),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(64, 0, 1e19, 1),
              StatusIs(absl::StatusCode::kInvalidArgument));  // B alone >= 2^63
}

TEST(FixedPointTest, CreateRejectsBadParameters) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(FixedPointCodec::Create(0, 0, 1.0, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(65, 10, 1.0, 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(32, -1, 1.0, 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(32, 32, 1.0, 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(32, 8, 0.0, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(32, 8, -1.0, 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(32, 8, inf, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(32, 8, nan, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(32, 8, 1.0, 0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FixedPointCodec::Create(1, 0, 1.0, 1),
              StatusIs(absl::StatusCode::kInvalidArgument));  // 2^0: nothing fits
}

TEST(FixedPointTest, EncodesTwosComplementAndDecodes) {
  auto codec = FixedPointCodec::Create(20, 8, 100.0, 10);
  ASSERT_THAT(codec, IsOk());
  EXPECT_EQ(codec->modulus_mask(), (uint64_t{1} << 20) - 1);
  EXPECT_EQ(*codec->Encode(1.5), 384u);
  EXPECT_EQ(*codec->Encode(-1.5), (uint64_t{1} << 20) - 384);
  EXPECT_EQ(*codec->Encode(0.0), 0u);
  EXPECT_EQ(*codec->Encode(-0.0), 0u);
  EXPECT_EQ(codec->DecodeSum(*codec->Encode(-1.5)), -1.5);
  EXPECT_EQ(codec->DecodeSumToInteger(*codec->Encode(-100.0)), -25600);
  // Bits above k are ignored by decoding.
  EXPECT_EQ(codec->DecodeSum(*codec->Encode(2.0) | (uint64_t{1} << 40)), 2.0);
  // Rounding to the nearest multiple of 2^-8.
  EXPECT_EQ(codec->DecodeSum(*codec->Encode(0.3)), std::round(0.3 * 256) / 256);
  random::Csprng rng = random::Csprng::FromSeed(1);
  for (int i = 0; i < 1000; ++i) {
    const double x = (2 * rng.NextDouble() - 1) * 100.0;
    EXPECT_LE(std::fabs(codec->DecodeSum(*codec->Encode(x)) - x), std::ldexp(1.0, -9));
  }
}

TEST(FixedPointTest, EncodingRejectsOutOfBoundAndNonFinite) {
  ASSERT_OK_AND_ASSIGN(auto codec, FixedPointCodec::Create(32, 10, 4.0, 100));
  EXPECT_THAT(codec.Encode(4.0), IsOk());
  EXPECT_THAT(codec.Encode(-4.0), IsOk());
  EXPECT_EQ(codec.Encode(4.0000001).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(codec.Encode(-5.0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(codec.Encode(std::numeric_limits<double>::quiet_NaN()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(codec.Encode(std::numeric_limits<double>::infinity()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(codec.Encode(-std::numeric_limits<double>::infinity()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  const std::vector<double> v = {1.0, 2.0, 9.0};
  auto enc = codec.EncodeVector(v);
  ASSERT_THAT(enc, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(enc.status().message().find("element 2"), absl::string_view::npos);
  // The first refused element is named, NaN and infinities included.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [bad, named] : std::vector<std::pair<std::vector<double>, std::string>>{
           {{1.0, nan, 9.0}, "element 1"},
           {{-inf, 0.0}, "element 0"},
           {{0.0, 0.0, 3.0, inf}, "element 3"}}) {
    auto refused = codec.EncodeVector(bad);
    ASSERT_THAT(refused, StatusIs(absl::StatusCode::kInvalidArgument)) << named;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << named;
    EXPECT_NE(refused.status().message().find(named), absl::string_view::npos)
        << refused.status().message();
  }
  std::vector<uint64_t> out(2);
  EXPECT_THAT(codec.EncodeVector(std::vector<double>{1.0}, out),
              StatusIs(absl::StatusCode::kInvalidArgument));
  std::vector<double> dec(3);
  EXPECT_THAT(codec.DecodeSumVector(out, dec), StatusIs(absl::StatusCode::kInvalidArgument));
}

// The inline rounding is std::llround exactly: on halves and their
// neighbours, integers, tiny values, values near 2^52 and 2^62, and random
// values of every magnitude; and EncodeVector equals Encode element-wise.
TEST(FixedPointTest, RoundingMatchesLlroundAndEncodeVectorMatchesEncode) {
  std::vector<double> ys = {0.0,
                            -0.0,
                            0.5,
                            -0.5,
                            1.5,
                            -1.5,
                            2.5,
                            -2.5,
                            0.49999999999999994,
                            -0.49999999999999994,
                            1e-300,
                            -1e-300,
                            0x1.0p52,
                            0x1.0p52 + 1,
                            -0x1.0p52 - 1,
                            0x1.0p52 - 0.5,
                            0x1.fffffffffffffp61,
                            -0x1.0p62};
  for (double h = 0.5; h < 1e6; h = h * 3 + 0.5) {
    ys.push_back(h);
    ys.push_back(-h);
    ys.push_back(std::nextafter(h, 0.0));
    ys.push_back(std::nextafter(-h, 0.0));
    ys.push_back(std::nextafter(h, 2 * h));
  }
  random::Csprng rng = random::Csprng::FromSeed(7);
  for (int k = 0; k < 20000; ++k) {
    const double magnitude = std::ldexp(1.0, static_cast<int>(rng.UniformInt(62)) - 10);
    ys.push_back((rng.NextDouble() * 2 - 1) * magnitude);
  }
  for (double y : ys) EXPECT_EQ(RoundHalfAwayFromZero(y), std::llround(y)) << y;

  ASSERT_OK_AND_ASSIGN(auto codec, FixedPointCodec::Create(32, 10, 4.0, 100));
  std::vector<double> x;
  for (int k = 0; k < 5000; ++k) x.push_back((rng.NextDouble() * 2 - 1) * 4.0);
  x.insert(x.end(), {4.0, -4.0, 0.5 / 1024, -0.5 / 1024, 1.5 / 1024, -2.5 / 1024});
  std::vector<uint64_t> out(x.size());
  ASSERT_THAT(codec.EncodeVector(x, out), IsOk());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(auto one, codec.Encode(x[i]));
    EXPECT_EQ(out[i], one) << x[i];
    EXPECT_EQ(out[i], static_cast<uint64_t>(std::llround(std::ldexp(x[i], 10))) & 0xffffffffu)
        << x[i];
  }
}

// EncodeVector equals Encode element-wise for codecs on both of its paths
// (four at a time while encodings stay below 2^51, one at a time above), on
// the rounding's edge cases at each codec's scale and on lengths that leave
// a remainder; a refused element inside the four-at-a-time part is named.
TEST(FixedPointTest, EncodeVectorEqualsEncodeOnBothPaths) {
  struct Params {
    int bits, frac_bits;
    double max_abs;
  };
  random::Csprng rng = random::Csprng::FromSeed(8);
  for (const Params& p : std::vector<Params>{{32, 10, 4.0},
                                             {48, 30, 1.5},
                                             {60, 49, 3.99},          // encodings just below 2^51
                                             {64, 40, 1048576.0}}) {  // up to 2^60: one at a time
    SCOPED_TRACE(::testing::Message() << p.bits << " bits, f = " << p.frac_bits);
    ASSERT_OK_AND_ASSIGN(auto codec, FixedPointCodec::Create(p.bits, p.frac_bits, p.max_abs, 2));
    const double step = std::ldexp(1.0, -p.frac_bits);
    std::vector<double> x = {0.0, -0.0, p.max_abs, -p.max_abs, step / 2, -step / 2};
    for (int k = 0; k < 2000; ++k) {
      const double half = (static_cast<double>(rng.UniformInt(1000)) + 0.5) * step;
      for (double h : {half, -half}) {
        x.push_back(h);
        x.push_back(std::nextafter(h, 0.0));
        x.push_back(std::nextafter(h, 2 * h));
      }
      x.push_back((rng.NextDouble() * 2 - 1) * p.max_abs);
    }
    for (size_t extra = 0; extra < 4; ++extra) {
      std::vector<double> v(x.begin(), x.end() - static_cast<std::ptrdiff_t>(extra));
      std::vector<uint64_t> out(v.size());
      ASSERT_THAT(codec.EncodeVector(v, out), IsOk());
      for (size_t i = 0; i < v.size(); ++i) {
        ASSERT_OK_AND_ASSIGN(auto one, codec.Encode(v[i]));
        ASSERT_EQ(out[i], one) << v[i];
      }
    }
    std::vector<double> bad(x.begin(), x.begin() + 16);
    bad[9] = std::numeric_limits<double>::quiet_NaN();
    bad[13] = 2 * p.max_abs;
    auto refused = codec.EncodeVector(bad);
    ASSERT_THAT(refused, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_NE(refused.status().message().find("element 9"), absl::string_view::npos)
        << refused.status().message();
    bad[9] = 0.0;
    refused = codec.EncodeVector(bad);
    ASSERT_THAT(refused, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_NE(refused.status().message().find("element 13"), absl::string_view::npos)
        << refused.status().message();
  }
}

// The property secure aggregation needs: the decoded mod-2^k sum of encodings
// is exactly the integer sum of the rounded inputs, for up to N inputs of
// magnitude up to B -- including all-at-the-bound worst cases.
TEST(FixedPointTest, SumOfEncodingsDecodesToTheExactIntegerSum) {
  struct Config {
    int bits, frac;
    double bound;
    uint64_t n;
  };
  random::Csprng rng = random::Csprng::FromSeed(2);
  for (const Config& c : {Config{24, 10, 3.0, 500}, Config{32, 16, 1.0, 32767},
                          Config{48, 24, 50.0, 1000}, Config{64, 30, 1e3, 4096}}) {
    SCOPED_TRACE(c.bits);
    ASSERT_OK_AND_ASSIGN(auto codec, FixedPointCodec::Create(c.bits, c.frac, c.bound, c.n));
    constexpr size_t kDim = 16;
    std::vector<uint64_t> acc(kDim, 0);
    std::vector<__int128> exact(kDim, 0);
    for (uint64_t p = 0; p < c.n; ++p) {
      std::vector<double> x(kDim);
      for (size_t i = 0; i < kDim; ++i) {
        // Column 0 always +B, column 1 always -B (the wrap-around worst cases).
        x[i] = i == 0 ? c.bound : i == 1 ? -c.bound : (2 * rng.NextDouble() - 1) * c.bound;
        exact[i] += std::llround(std::ldexp(x[i], c.frac));
      }
      ASSERT_OK_AND_ASSIGN(auto enc, codec.EncodeVector(x));
      ASSERT_THAT(AddMod2k(acc, enc, c.bits), IsOk());
    }
    for (size_t i = 0; i < kDim; ++i) {
      ASSERT_EQ(codec.DecodeSumToInteger(acc[i]), static_cast<int64_t>(exact[i])) << i;
      ASSERT_EQ(codec.DecodeSum(acc[i]), std::ldexp(static_cast<double>(exact[i]), -c.frac));
    }
    auto decoded = codec.DecodeSumVector(acc);
    EXPECT_DOUBLE_EQ(decoded[0], c.bound * static_cast<double>(c.n));
    EXPECT_DOUBLE_EQ(decoded[1], -c.bound * static_cast<double>(c.n));
  }
}

TEST(FixedPointTest, ModularVectorHelpers) {
  std::vector<uint64_t> a = {1, 0, 255}, b = {2, 1, 1};
  ASSERT_THAT(AddMod2k(a, b, 8), IsOk());
  EXPECT_EQ(a, (std::vector<uint64_t>{3, 1, 0}));
  ASSERT_THAT(SubMod2k(a, b, 8), IsOk());
  EXPECT_EQ(a, (std::vector<uint64_t>{1, 0, 255}));
  ASSERT_THAT(SubMod2k(a, std::vector<uint64_t>{2, 1, 0}, 8), IsOk());
  EXPECT_EQ(a, (std::vector<uint64_t>{255, 255, 255}));
  std::vector<uint64_t> w = {~uint64_t{0}};
  ASSERT_THAT(AddMod2k(w, std::vector<uint64_t>{1}, 64), IsOk());
  EXPECT_EQ(w[0], 0u);
  EXPECT_THAT(AddMod2k(a, std::vector<uint64_t>{1}, 8),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(SubMod2k(a, b, 0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(AddMod2k(a, b, 65), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::crypto
