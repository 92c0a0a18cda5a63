#include "common/crypto/gf127.h"

#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::crypto::gf127 {
namespace {

Elem RandomElem(random::Csprng& rng) {
  Elem e = (Elem{rng.NextU64()} << 64 | rng.NextU64()) & kP;
  return e == kP ? 0 : e;
}

// Reference multiplication by double-and-add (only Add, which is simple).
Elem SlowMul(Elem a, Elem b) {
  Elem acc = 0;
  for (int i = 126; i >= 0; --i) {
    acc = Add(acc, acc);
    if ((b >> i) & 1) acc = Add(acc, a);
  }
  return acc;
}

TEST(Gf127Test, ReduceHandlesTheEdges) {
  EXPECT_EQ(Reduce(0), Elem{0});
  EXPECT_EQ(Reduce(kP), Elem{0});
  EXPECT_EQ(Reduce(kP + 1), Elem{1});
  EXPECT_EQ(Reduce(kP - 1), kP - 1);
  EXPECT_EQ(Reduce(~Elem{0}), Elem{1});  // 2^128 - 1 = 2p + 1
  EXPECT_EQ(Add(kP - 1, 1), Elem{0});
  EXPECT_EQ(Sub(0, 1), kP - 1);
  EXPECT_EQ(Neg(0), Elem{0});
}

TEST(Gf127Test, MulMatchesReferenceAndFieldLaws) {
  random::Csprng rng = random::Csprng::FromSeed(5);
  EXPECT_EQ(Mul(kP - 1, kP - 1), Elem{1});     // (-1)^2
  EXPECT_EQ(Mul(Elem{1} << 126, 2), Elem{1});  // 2^127 == 1
  for (int i = 0; i < 300; ++i) {
    const Elem a = RandomElem(rng), b = RandomElem(rng), c = RandomElem(rng);
    ASSERT_EQ(Mul(a, b), SlowMul(a, b));
    ASSERT_EQ(Mul(a, b), Mul(b, a));
    ASSERT_EQ(Mul(a, Add(b, c)), Add(Mul(a, b), Mul(a, c)));
    ASSERT_LT(Mul(a, b), kP);
    if (a != 0) {
      ASSERT_EQ(Mul(a, Inv(a)), Elem{1});
    }
  }
}

TEST(Gf127Test, InterpolationRecoversAPolynomial) {
  random::Csprng rng = random::Csprng::FromSeed(6);
  std::vector<Elem> coeffs(5);
  for (Elem& c : coeffs) c = RandomElem(rng);
  auto f = [&](Elem x) {
    Elem y = 0;
    for (size_t k = coeffs.size(); k-- > 0;) y = Add(Mul(y, x), coeffs[k]);
    return y;
  };
  std::vector<Elem> xs = {3, 9, 1000, kP - 2, 77}, ys;
  for (Elem x : xs) ys.push_back(f(x));
  for (Elem at : {Elem{0}, Elem{1}, Elem{123456789}, kP - 1}) {
    ASSERT_OK_AND_ASSIGN(auto v, InterpolateAt(xs, ys, at));
    EXPECT_EQ(v, f(at));
  }
  xs[1] = xs[0];
  EXPECT_THAT(InterpolateAt(xs, ys, 0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(LagrangeCoefficients({}, 0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(InterpolateAt(std::vector<Elem>{kP}, std::vector<Elem>{1}, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// The batched inversion against the definition, lambda_j =
// prod_{m != j} (x - x_m) / (x_j - x_m), one inversion per j.
TEST(Gf127Test, LagrangeCoefficientsMatchTheDefinition) {
  random::Csprng rng = random::Csprng::FromSeed(8);
  for (size_t k : {1, 2, 3, 7, 22, 40}) {
    std::vector<Elem> xs;
    for (size_t j = 0; j < k; ++j) xs.push_back(j % 2 == 0 ? Elem{j + 1} : RandomElem(rng));
    for (Elem at : {Elem{0}, RandomElem(rng), xs[k / 2]}) {
      ASSERT_OK_AND_ASSIGN(auto lambda, LagrangeCoefficients(xs, at));
      ASSERT_EQ(lambda.size(), k);
      for (size_t j = 0; j < k; ++j) {
        Elem num = 1, den = 1;
        for (size_t m = 0; m < k; ++m) {
          if (m == j) continue;
          num = Mul(num, Sub(at, xs[m]));
          den = Mul(den, Sub(xs[j], xs[m]));
        }
        ASSERT_EQ((lambda)[j], Mul(num, Inv(den))) << "k = " << k << ", j = " << j;
      }
    }
  }
}

TEST(Gf127Test, LoadStoreRoundTrip) {
  random::Csprng rng = random::Csprng::FromSeed(7);
  for (int i = 0; i < 100; ++i) {
    const Elem a = RandomElem(rng);
    uint8_t buf[kElemBytes];
    Store(a, buf);
    EXPECT_EQ(Load(buf), a);
  }
  uint8_t one[kElemBytes] = {1};
  EXPECT_EQ(Load(one), Elem{1});  // little-endian
}

}  // namespace
}  // namespace fedmf::crypto::gf127
