// LflDevice against a hostile server: whatever V it receives, the device's
// pre-noise round-1 contribution moves by at most Delta = 2 R^{3/2} between
// neighbouring datasets (the device with and without its rating).
#include "common/lfl/lfl_device.h"

#include <cmath>

#include <gtest/gtest.h>

#include "common/mf/clipping.h"

namespace fedmf::lfl {
namespace {

constexpr int32_t kItems = 5;
constexpr int32_t kDim = 4;
constexpr double kR = 5.0;

data::PartyData Data(std::vector<data::Rating> train) {
  data::PartyData d;
  d.global_users = {0};
  for (int32_t j = 0; j < kItems; ++j) d.global_items.push_back(j);
  d.train = std::move(train);
  d.range = {0, kR};
  return d;
}

LflDevice Device(std::vector<data::Rating> train, uint64_t seed) {
  LflDeviceOptions o;
  o.dim = kDim;
  o.rating_max = kR;
  o.pretrain_epochs = 5;
  // sigma_v = 0: no noise, so Round1 returns the pre-noise contribution.
  return LflDevice(Data(std::move(train)), o, TwoRoundParams{4, 0.3, 0.0},
                   random::Csprng::FromSeed(seed));
}

double Norm(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

mf::Matrix HonestV() {
  mf::Matrix v(kItems, kDim);
  for (int32_t j = 0; j < kItems; ++j) {
    for (int32_t c = 0; c < kDim; ++c) v(j, c) = 0.3 + 0.1 * ((j + c) % 3);
  }
  return v;
}

TEST(LflDeviceTest, HugeRowInReceivedVStaysWithinSensitivity) {
  const double delta = mf::SensitivityOneMatrix(kR);  // 2 R^{3/2} = 22.36
  for (double huge : {1e6, -1e6}) {
    for (int32_t c_hot = -1; c_hot < kDim; ++c_hot) {
      mf::Matrix v = HonestV();
      for (int32_t c = 0; c < kDim; ++c) v(2, c) = (c_hot < 0 || c == c_hot) ? huge : 0.0;
      LflDevice with = Device({{0, 2, 5.0f}}, 7);
      LflDevice without = Device({}, 7);
      ASSERT_TRUE(with.Pretrain(HonestV()).ok());
      ASSERT_TRUE(without.Pretrain(HonestV()).ok());
      auto a = with.Round1(v);
      auto b = without.Round1(v);
      ASSERT_TRUE(a.ok() && b.ok());
      std::vector<double> diff(a->size());
      for (size_t k = 0; k < diff.size(); ++k) diff[k] = (*a)[k] - (*b)[k];
      EXPECT_LE(Norm(diff), delta * (1 + 1e-12)) << "huge " << huge << " column " << c_hot;
      EXPECT_EQ(Norm(*b), 0.0);  // no rating: nothing but (zero) noise
    }
  }
}

TEST(LflDeviceTest, HostileV0AtPretrainCannotPushUOutOfTheClippingSet) {
  mf::Matrix hostile = HonestV();
  hostile.row(2).setConstant(1e6);
  LflDevice d = Device({{0, 2, 5.0f}, {0, 3, 1.0f}}, 3);
  ASSERT_TRUE(d.Pretrain(hostile).ok());
  // Round 1 with a hostile V again: still bounded by Delta.
  auto x = d.Round1(hostile);
  ASSERT_TRUE(x.ok());
  EXPECT_LE(Norm(*x), mf::SensitivityOneMatrix(kR) * (1 + 1e-12));
}

TEST(LflDeviceTest, HonestRowsAreUsedUnchanged) {
  // V inside the clipping set: the contribution is -2 e u with e from the
  // unclipped row (projection is the identity there).
  mf::Matrix v = HonestV();
  LflDevice d = Device({{0, 1, 4.0f}}, 11);
  ASSERT_TRUE(d.Pretrain(v).ok());
  auto x = d.Round1(v);
  ASSERT_TRUE(x.ok());
  double nonzero_rows = 0;
  for (int32_t j = 0; j < kItems; ++j) {
    double s = 0;
    for (int32_t c = 0; c < kDim; ++c) s += std::abs((*x)[j * kDim + c]);
    nonzero_rows += s > 0;
  }
  EXPECT_EQ(nonzero_rows, 1);
  EXPECT_GT(Norm(*x), 0);
}

}  // namespace
}  // namespace fedmf::lfl
