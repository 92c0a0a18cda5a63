#include "common/mf/embeddings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/mf/clipping.h"
#include "tests/unit/mf/test_util.h"

namespace fedmf::mf {
namespace {

using data::Rating;
using random::Csprng;

TEST(RatingMatrixTest, GroupsByUserAndKeepsInputOrderWithinARow) {
  const std::vector<Rating> ratings = {
      {2, 1, 3.0f}, {0, 4, 5.0f}, {2, 0, 1.0f}, {0, 2, 2.0f}, {3, 3, 4.0f}};
  RatingMatrix x(4, 5, ratings);
  EXPECT_EQ(x.num_users(), 4);
  EXPECT_EQ(x.num_items(), 5);
  EXPECT_EQ(x.nnz(), 5);
  ASSERT_EQ(x.RowSize(0), 2);
  EXPECT_EQ(x.Row(0)[0].item, 4);
  EXPECT_EQ(x.Row(0)[1].item, 2);
  EXPECT_EQ(x.RowSize(1), 0);
  EXPECT_TRUE(x.Row(1).empty());
  ASSERT_EQ(x.RowSize(2), 2);
  EXPECT_EQ(x.Row(2)[0].item, 1);
  EXPECT_FLOAT_EQ(x.Row(2)[0].value, 3.0f);
  EXPECT_EQ(x.Row(2)[1].item, 0);
  EXPECT_EQ(x.RowSize(3), 1);
  EXPECT_EQ(x.MaxRowSize(), 2);

  const std::vector<Rating> back = x.ToRatings();
  const std::vector<Rating> expected = {
      {0, 4, 5.0f}, {0, 2, 2.0f}, {2, 1, 3.0f}, {2, 0, 1.0f}, {3, 3, 4.0f}};
  EXPECT_EQ(back, expected);
}

TEST(RatingMatrixTest, EmptyMatrix) {
  RatingMatrix empty;
  EXPECT_EQ(empty.num_users(), 0);
  EXPECT_EQ(empty.nnz(), 0);
  EXPECT_EQ(empty.MaxRowSize(), 0);
  RatingMatrix no_ratings(3, 2, {});
  EXPECT_EQ(no_ratings.nnz(), 0);
  EXPECT_EQ(no_ratings.RowSize(2), 0);
  EXPECT_TRUE(no_ratings.ToRatings().empty());
}

TEST(RatingMatrixDeathTest, OutOfRangeIndexAborts) {
  EXPECT_DEATH(RatingMatrix(2, 2, {{2, 0, 1.0f}}), "user out of range");
  EXPECT_DEATH(RatingMatrix(2, 2, {{0, -1, 1.0f}}), "item out of range");
}

TEST(RandomEmbeddingsTest, UniformInRangeAndDeterministic) {
  Csprng rng = Csprng::FromSeed(1);
  const Matrix m = RandomEmbeddings(300, 20, 0.7, rng);
  ASSERT_EQ(m.rows(), 300);
  ASSERT_EQ(m.cols(), 20);
  EXPECT_GE(m.minCoeff(), 0.0);
  EXPECT_LT(m.maxCoeff(), 0.7);
  // Mean of U[0, 0.7) over 6000 draws: 0.35 +- 0.7/sqrt(12*6000) ~ 0.0026.
  EXPECT_NEAR(m.mean(), 0.35, 0.012);

  Csprng a = Csprng::FromSeed(9);
  Csprng b = Csprng::FromSeed(9);
  EXPECT_EQ(RandomEmbeddings(5, 7, 1.0, a), RandomEmbeddings(5, 7, 1.0, b));
}

TEST(RandomEmbeddingsTest, OverloadWithRatingMaxClipsAndUsesTheSameStream) {
  Csprng a = Csprng::FromSeed(2);
  Csprng b = Csprng::FromSeed(2);
  // Scale 1 at p = 20: squared norms ~ 20/3 > R = 5, so many rows get clipped.
  Matrix raw = RandomEmbeddings(200, 20, 1.0, a);
  const Matrix clipped = RandomEmbeddings(200, 20, 1.0, 5.0, b);
  ClipEmbeddings(raw, 5.0);
  EXPECT_EQ(raw, clipped);
  EXPECT_LE(clipped.rowwise().norm().maxCoeff(), std::sqrt(5.0) + 1e-12);
}

TEST(RandomEmbeddingsTest, InitScaleGivesMeanInnerProductNearTheMeanRating) {
  EXPECT_DOUBLE_EQ(InitScaleFor(3.5, 20), 2.0 * std::sqrt(3.5 / 20.0));
  EXPECT_EQ(InitScaleFor(3.5, 0), 0.0);
  const double mean = 3.5;
  for (const int32_t p : {5, 20, 50}) {
    Csprng rng = Csprng::FromSeed(100 + p);
    // Unclipped: E<u,v> = mean exactly. Row i with row i gives 2000
    // independent pairs; the sd of one product is <= 1.4, so SE <= 0.031.
    const Matrix u = RandomEmbeddings(2000, p, InitScaleFor(mean, p), rng);
    const Matrix v = RandomEmbeddings(2000, p, InitScaleFor(mean, p), rng);
    const double avg = (u.array() * v.array()).rowwise().sum().mean();
    EXPECT_NEAR(avg, mean, 0.15) << "p=" << p;
  }
  // Clipped to R = 5 at p = 20: E||u||^2 = 4*mean/3 = 4.67 is close to R, so
  // about a third of the rows shrink a little and the mean drops by ~5%.
  Csprng rng = Csprng::FromSeed(99);
  const Matrix u = RandomEmbeddings(2000, 20, InitScaleFor(mean, 20), 5.0, rng);
  const Matrix v = RandomEmbeddings(2000, 20, InitScaleFor(mean, 20), 5.0, rng);
  const double avg = (u.array() * v.array()).rowwise().sum().mean();
  EXPECT_LT(avg, mean);
  EXPECT_GT(avg, 0.9 * mean);
}

TEST(RoundedToFloat32Test, TowardZeroWithinOneFloatUlp) {
  Csprng rng = Csprng::FromSeed(3);
  Matrix m = RandomEmbeddings(200, 8, 1.0, rng);
  m.col(3) *= -1.0;  // negatives round toward zero too
  m(0, 0) = 0.8;     // nearest float is above 0.8: toward zero takes the one below
  m(0, 1) = 0.5;     // exactly representable: unchanged
  const Matrix r = RoundedToFloat32(m);
  EXPECT_EQ(r(0, 0), static_cast<double>(std::nextafter(0.8f, 0.0f)));
  EXPECT_EQ(r(0, 1), 0.5);
  for (int64_t k = 0; k < m.size(); ++k) {
    const double x = m.data()[k], y = r.data()[k];
    EXPECT_EQ(static_cast<double>(static_cast<float>(y)), y) << k;  // a float32 value
    EXPECT_LE(std::fabs(y), std::fabs(x)) << k;                     // never grows
    EXPECT_FALSE(x != 0 && std::signbit(x) != std::signbit(y)) << k;
    EXPECT_LE(std::fabs(x - y), std::fabs(x) * 1.2e-7) << k;  // < 1 ulp (2^-23)
  }
  EXPECT_EQ(RoundedToFloat32(r), r);  // idempotent: the wire then loses nothing
}

// Rounding a projected matrix keeps it in the projected set, so a released
// matrix is feasible as it was before rounding.
TEST(RoundedToFloat32Test, KeepsClippedRowsClipped) {
  Csprng rng = Csprng::FromSeed(5);
  Matrix m = RandomEmbeddings(500, 20, 3.0, 5.0, rng);  // many rows clipped to sqrt(5)
  const Matrix r = RoundedToFloat32(m);
  EXPECT_GE(r.minCoeff(), 0.0);
  EXPECT_LE(r.rowwise().squaredNorm().maxCoeff(), 5.0);
}

}  // namespace
}  // namespace fedmf::mf
