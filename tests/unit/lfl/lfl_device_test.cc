// LflDevice against a hostile server: whatever V it receives, the device's
// pre-noise round-1 contribution moves by at most Delta = 2 R^{3/2} between
// neighbouring datasets (the device with and without its rating).
#include "common/lfl/lfl_device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "common/mf/clipping.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

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

std::shared_ptr<const mf::Matrix> Shared(mf::Matrix v) {
  return std::make_shared<const mf::Matrix>(std::move(v));
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
      ASSERT_THAT(with.Pretrain(Shared(HonestV())), IsOk());
      ASSERT_THAT(without.Pretrain(Shared(HonestV())), IsOk());
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
  ASSERT_THAT(d.Pretrain(Shared(hostile)), IsOk());
  // Round 1 with a hostile V again: still bounded by Delta.
  ASSERT_OK_AND_ASSIGN(auto x, d.Round1(hostile));
  EXPECT_LE(Norm(x), mf::SensitivityOneMatrix(kR) * (1 + 1e-12));
}

TEST(LflDeviceTest, HonestRowsAreUsedUnchanged) {
  // V inside the clipping set: the contribution is -2 e u with e from the
  // unclipped row (projection is the identity there).
  mf::Matrix v = HonestV();
  LflDevice d = Device({{0, 1, 4.0f}}, 11);
  ASSERT_THAT(d.Pretrain(Shared(v)), IsOk());
  ASSERT_OK_AND_ASSIGN(auto x, d.Round1(v));
  double nonzero_rows = 0;
  for (int32_t j = 0; j < kItems; ++j) {
    double s = 0;
    for (int32_t c = 0; c < kDim; ++c) s += std::abs((x)[j * kDim + c]);
    nonzero_rows += s > 0;
  }
  EXPECT_EQ(nonzero_rows, 1);
  EXPECT_GT(Norm(x), 0);
}

// A device with enough ratings to hold some out: ratings of a rank-one
// structure that `good` fits and the zero matrix does not.
LflDevice ValidatingDevice(uint64_t seed, int32_t items, int32_t finetune_epochs) {
  data::PartyData d;
  d.global_users = {0};
  for (int32_t j = 0; j < items; ++j) d.global_items.push_back(j);
  for (int32_t j = 0; j < items; ++j) {
    (j % 5 == 4 ? d.test : d.train).push_back({0, j, static_cast<float>(1 + (j % 4))});
  }
  d.range = {0, kR};
  LflDeviceOptions o;
  o.dim = kDim;
  o.rating_max = kR;
  o.pretrain_epochs = 20;
  o.finetune_epochs = finetune_epochs;
  o.sgd_learning_rate = 0.05;
  o.validation_fraction = 0.25;
  return LflDevice(std::move(d), o, TwoRoundParams{4, 0.3, 0.0}, random::Csprng::FromSeed(seed));
}

mf::Matrix GoodV(int32_t items) {
  // Row j is (1 + j % 4) / 2 * e_0: with u = (2, 0, ...) it predicts every rating exactly.
  mf::Matrix v = mf::Matrix::Zero(items, kDim);
  for (int32_t j = 0; j < items; ++j) v(j, 0) = 0.5 * (1 + (j % 4));
  return v;
}

TEST(LflDeviceTest, KeepsStageOneWhenTheFederatedVIsWorseOnValidation) {
  constexpr int32_t kMany = 40;
  LflDevice d = ValidatingDevice(5, kMany, 10);
  ASSERT_THAT(d.Pretrain(Shared(GoodV(kMany))), IsOk());
  const mf::ErrorMetrics stage1 = d.EvaluateTest();
  ASSERT_GT(stage1.count, 0);
  // A V that predicts 0 for everything: no u fits it, validation says so.
  ASSERT_THAT(d.Finish(Shared(mf::Matrix::Zero(kMany, kDim))), IsOk());
  EXPECT_TRUE(d.kept_stage1());
  const mf::ErrorMetrics kept = d.EvaluateTest();
  EXPECT_EQ(kept.count, stage1.count);
  EXPECT_DOUBLE_EQ(kept.mse, stage1.mse);
}

TEST(LflDeviceTest, KeepsTheFederatedModelWhenItIsBetterOnValidation) {
  constexpr int32_t kMany = 40;
  LflDevice d = ValidatingDevice(5, kMany, 10);
  ASSERT_THAT(d.Pretrain(Shared(mf::Matrix::Zero(kMany, kDim))), IsOk());
  const double stage1 = d.EvaluateTest().mse;
  ASSERT_THAT(d.Finish(Shared(GoodV(kMany))), IsOk());
  EXPECT_FALSE(d.kept_stage1());
  EXPECT_LT(d.EvaluateTest().mse, 0.5 * stage1);
}

TEST(LflDeviceTest, FinishRefusesAMalformedV) {
  LflDevice d = ValidatingDevice(5, 20, 2);
  ASSERT_THAT(d.Pretrain(Shared(GoodV(20))), IsOk());
  absl::Status s = d.Finish(Shared(mf::Matrix::Zero(19, kDim)));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("want 20 x 4"), absl::string_view::npos) << s.message();
  EXPECT_EQ(d.Finish(nullptr).code(), absl::StatusCode::kInvalidArgument);
}

TEST(LflDeviceTest, WholeGradientIsScaledToTheClipNorm) {
  // Ratings far from the predictions: every row's gradient is large, and
  // their sum must come back at norm exactly C.
  LflDeviceOptions o;
  o.dim = kDim;
  o.rating_max = kR;
  o.pretrain_epochs = 0;
  o.clip_norm = 0.5;
  o.validation_fraction = 0;
  std::vector<data::Rating> train;
  for (int32_t j = 0; j < kItems; ++j) train.push_back({0, j, 5.0f});
  LflDevice d(Data(train), o, TwoRoundParams{4, 0.3, 0.0}, random::Csprng::FromSeed(2));
  ASSERT_THAT(d.Pretrain(Shared(mf::Matrix::Constant(kItems, kDim, 0.01))), IsOk());
  ASSERT_OK_AND_ASSIGN(auto g, d.Round1Gradient(mf::Matrix::Constant(kItems, kDim, 0.01)));
  EXPECT_EQ(g.items.size(), static_cast<size_t>(kItems));
  EXPECT_NEAR(Norm(g.rows), 0.5, 1e-12);
}

TEST(LflDeviceTest, WholeGradientSensitivitySearch) {
  // Neighbouring datasets per user: the device with its ratings (D) and with
  // none (D'). Search random rating sets, honest and hostile V and clip
  // norms (0: the default 2 R^{3/2}): the pre-noise change never exceeds
  // the C the noise is calibrated to, and reaches it.
  random::Csprng search = random::Csprng::FromSeed(17);
  for (double clip : {0.0, 3.0, 0.25}) {
    double worst = 0;
    for (int trial = 0; trial < 200; ++trial) {
      LflDeviceOptions o;
      o.dim = kDim;
      o.rating_max = kR;
      o.pretrain_epochs = static_cast<int32_t>(search.UniformInt(3));
      o.clip_norm = clip;
      o.validation_fraction = 0;
      std::vector<data::Rating> train;
      for (int32_t j = 0; j < kItems; ++j) {
        if (search.Bernoulli(0.7)) {
          train.push_back({0, j, static_cast<float>(search.UniformInt(6))});  // 0..5
        }
      }
      mf::Matrix v(kItems, kDim);
      const double scale = trial % 3 == 0 ? 1e6 : 1.0;  // every third V hostile
      for (int64_t k = 0; k < v.size(); ++k) {
        v.data()[k] = scale * (search.NextDouble() * 4 - (trial % 2 == 0 ? 2 : 0));
      }
      LflDevice with(Data(train), o, TwoRoundParams{4, 0.3, 0.0}, random::Csprng::FromSeed(trial));
      LflDevice without(Data({}), o, TwoRoundParams{4, 0.3, 0.0}, random::Csprng::FromSeed(trial));
      ASSERT_THAT(with.Pretrain(Shared(v)), IsOk());
      ASSERT_THAT(without.Pretrain(Shared(v)), IsOk());
      auto a = with.Round1(v);
      auto b = without.Round1(v);
      ASSERT_TRUE(a.ok() && b.ok());
      std::vector<double> diff(a->size());
      for (size_t k = 0; k < diff.size(); ++k) diff[k] = (*a)[k] - (*b)[k];
      const double bound = o.GradientNormBound();
      EXPECT_LE(Norm(diff), bound * (1 + 1e-12)) << "clip " << clip << " trial " << trial;
      worst = std::max(worst, Norm(diff) / bound);
    }
    EXPECT_GT(worst, 0.99) << "clip " << clip << ": the bound is never approached";
  }
}

TEST(LflDeviceTest, Round1IsRound1GradientScatteredWithoutNoise) {
  mf::Matrix v = HonestV();
  LflDevice a = Device({{0, 1, 4.0f}, {0, 3, 2.0f}}, 11);
  LflDevice b = Device({{0, 1, 4.0f}, {0, 3, 2.0f}}, 11);
  ASSERT_THAT(a.Pretrain(Shared(v)), IsOk());
  ASSERT_THAT(b.Pretrain(Shared(v)), IsOk());
  auto g = a.Round1Gradient(v);
  auto x = b.Round1(v);
  ASSERT_TRUE(g.ok() && x.ok());
  ASSERT_EQ(g->items, (std::vector<int32_t>{1, 3}));  // whole gradient: both ratings
  std::vector<double> scattered(x->size(), 0.0);
  for (size_t k = 0; k < g->items.size(); ++k) {
    for (int32_t c = 0; c < kDim; ++c) scattered[g->items[k] * kDim + c] = g->rows[k * kDim + c];
  }
  EXPECT_EQ(scattered, *x);  // sigma_v = 0: bit for bit
  EXPECT_THAT(Device({}, 1).Round1Gradient(v),
              StatusIs(absl::StatusCode::kFailedPrecondition));  // before Pretrain: out of phase
}

}  // namespace
}  // namespace fedmf::lfl
