// A data owner against the parameter server it does not trust: whatever
// model arrives, its release is the clipped sum (sensitivity C) plus its own
// noise, charged before it is returned; malformed models and replayed rounds
// release nothing and charge nothing.
#include "common/coupling/owner_session.h"

#include <cmath>
#include <limits>

#include "common/dp/calibration.h"
#include "common/dp/snapping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/coupling/test_data.h"

namespace fedmf::coupling {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

constexpr int32_t kUsers = 10, kItems = 12, kDim = 3;

class OwnerSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto layout, FlatLayout::Create(kUsers, kItems, kDim));
    layout_ = layout;
    // This owner holds users 0..4 of the model's 10.
    for (const data::Rating& r : LowRankRatings(kUsers, kItems, 0.6, 9)) {
      if (r.user < 5) (train_.size() % 5 == 4 ? test_ : train_).push_back(r);
    }
    random::Csprng rng = random::Csprng::FromSeed(4);
    ASSERT_OK_AND_ASSIGN(auto model, InitialModel(kUsers, kItems, kDim, 0, 0.1, rng));
    model_ = FlattenModel(model);
  }

  OwnerSession::Terms TermsWith(double z, int32_t rounds = 5) const {
    OwnerSession::Terms terms;
    terms.job_id = "job";
    terms.rounds = rounds;
    terms.range = {1, 5};
    terms.options.dim = kDim;
    terms.options.sample_rate = 0.5;
    terms.options.noise_multiplier = z;
    return terms;
  }

  std::unique_ptr<OwnerSession> Owner(double z, dp::PrivacyLedger* ledger, int32_t rounds = 5) {
    auto owner = OwnerSession::Create(TermsWith(z, rounds), *layout_, train_, test_, ledger,
                                      random::Csprng::FromSeed(8));
    EXPECT_THAT(owner, IsOk());
    return owner.ok() ? std::move(*owner) : nullptr;
  }

  std::optional<FlatLayout> layout_;
  std::vector<data::Rating> train_, test_;
  mf::Matrix model_;
};

TEST_F(OwnerSessionTest, ChargesOneStepPerRoundBeforeReleasing) {
  dp::PrivacyLedger ledger(100, 1e-5);
  auto owner = Owner(1.2, &ledger);
  ASSERT_NE(owner, nullptr);
  ASSERT_OK_AND_ASSIGN(auto first, owner->RunStep(0, model_));
  EXPECT_EQ(first.cols(), layout_->size());
  // A missed round costs nothing; the next one is charged under its own key.
  ASSERT_THAT(owner->RunStep(2, model_), IsOk());
  ASSERT_EQ(ledger.entries().size(), 2u);
  EXPECT_EQ(ledger.entries()[0].round, 0);
  EXPECT_EQ(ledger.entries()[1].round, 2);
  for (const dp::LedgerEntry& e : ledger.entries()) {
    EXPECT_EQ(e.job_id, "job");
    EXPECT_EQ(e.sample_rate, 0.5);
    EXPECT_EQ(e.noise_multiplier, 1.2);
    EXPECT_EQ(e.steps, 1);
  }
  EXPECT_EQ(owner->steps_charged(), 2);
  // Noise on every coordinate, the other owners' users' rows included (which
  // rows a step touches must not show).
  const int64_t others_row = 7 * kDim;
  EXPECT_NE((first)(0, others_row), 0.0);
  EXPECT_NE((first)(0, layout_->size() - 1), 0.0);
}

// Issue #54: the upload is snapped as the FMF releases are. Every value lies
// on the grid of its own binade (or the noise's, near zero), a fixed format
// whatever the data, and float32 — the wire's encoding — holds it exactly,
// so the codec's round-to-nearest cast changes nothing.
TEST_F(OwnerSessionTest, TheReleaseIsSnappedAndExactInFloat32) {
  dp::PrivacyLedger ledger(100, 1e-5);
  auto owner = Owner(1.2, &ledger);
  ASSERT_NE(owner, nullptr);
  ASSERT_OK_AND_ASSIGN(auto release, owner->RunStep(0, model_));
  const double noise_sd = 1.2 * TermsWith(1.2).options.clip;
  int64_t nonzero = 0;
  for (int64_t k = 0; k < release.size(); ++k) {
    const double x = release.data()[k];
    ASSERT_EQ(x, dp::SnapInBinadeTowardZero(x, noise_sd)) << "value " << k;
    ASSERT_EQ(x, static_cast<double>(static_cast<float>(x))) << "value " << k;
    // On a grid at least 2^-20 of the noise: not the raw double.
    ASSERT_EQ(std::fmod(x, dp::SnapGranularity(noise_sd, std::max(std::fabs(x), noise_sd))), 0.0);
    nonzero += x != 0 ? 1 : 0;
  }
  EXPECT_EQ(nonzero, release.size());
}

TEST_F(OwnerSessionTest, RefusesReplayedEarlierAndOutOfJobRoundsWithoutCharging) {
  dp::PrivacyLedger ledger(100, 1e-5);
  auto owner = Owner(1.0, &ledger);
  ASSERT_NE(owner, nullptr);
  ASSERT_THAT(owner->RunStep(1, model_), IsOk());
  EXPECT_THAT(owner->RunStep(1, model_), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(owner->RunStep(0, model_), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(owner->RunStep(5, model_),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("5 rounds")));
  EXPECT_EQ(ledger.entries().size(), 1u);
}

TEST_F(OwnerSessionTest, RefusesAMalformedModelWithoutCharging) {
  dp::PrivacyLedger ledger(100, 1e-5);
  auto owner = Owner(1.0, &ledger);
  ASSERT_NE(owner, nullptr);
  // A model for more users than the owner's own data says the job has.
  EXPECT_THAT(owner->RunStep(0, mf::Matrix::Zero(1, layout_->size() + kDim)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected 1x")));
  mf::Matrix poisoned = model_;
  poisoned(0, 4) = std::numeric_limits<double>::infinity();
  EXPECT_THAT(owner->RunStep(0, poisoned), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(ledger.entries().empty());
  EXPECT_EQ(owner->next_round(), 0);
}

TEST_F(OwnerSessionTest, AnExhaustedBudgetReleasesNothing) {
  // One step at z = 0.5, q = 0.5 costs far more than 0.5.
  dp::PrivacyLedger ledger(0.5, 1e-5);
  auto owner = Owner(0.5, &ledger);
  ASSERT_NE(owner, nullptr);
  EXPECT_THAT(owner->RunStep(0, model_),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("budget")));
  EXPECT_TRUE(ledger.entries().empty());
  EXPECT_EQ(owner->steps_charged(), 0);
}

TEST_F(OwnerSessionTest, NonPrivateChargesNothingAndReleasesTheClippedSum) {
  dp::PrivacyLedger ledger(1, 1e-5);
  auto owner = Owner(0, &ledger);
  ASSERT_NE(owner, nullptr);
  ASSERT_OK_AND_ASSIGN(auto release, owner->RunStep(0, model_));
  EXPECT_TRUE(ledger.entries().empty());
  // No noise: rows of users the owner does not hold stay zero.
  EXPECT_EQ(release.middleCols(7 * kDim, kDim).squaredNorm(), 0.0);
  EXPECT_GT(release.squaredNorm(), 0.0);
}

// The sensitivity over the daemons: whatever model the server sends (here:
// models with huge entries, which make raw gradients huge), adding or
// removing one rating moves the pre-noise release by at most C.
TEST_F(OwnerSessionTest, AHostileModelCannotRaiseTheSensitivity) {
  dp::PrivacyLedger ledger(100, 1e-5);
  auto owner = Owner(1.0, &ledger);
  ASSERT_NE(owner, nullptr);
  const double clip = TermsWith(1.0).options.clip;
  random::Csprng rng = random::Csprng::FromSeed(21);
  double worst = 0;
  for (double scale : {0.1, 10.0, 1e4}) {
    mf::Matrix hostile(1, layout_->size());
    for (int64_t k = 0; k < hostile.size(); ++k) hostile(0, k) = scale * (rng.NextDouble() - 0.5);
    ASSERT_OK_AND_ASSIGN(auto base, owner->PreNoiseRelease(train_, hostile));
    for (size_t k = 0; k < train_.size(); k += 3) {
      std::vector<data::Rating> removed = train_;
      removed.erase(removed.begin() + static_cast<std::ptrdiff_t>(k));
      ASSERT_OK_AND_ASSIGN(auto neighbour, owner->PreNoiseRelease(removed, hostile));
      worst = std::max(worst, (base - neighbour).norm());
    }
  }
  EXPECT_LE(worst, clip * (1 + 1e-12));
  EXPECT_GT(worst, 0.99 * clip);  // the search reaches the bound
  EXPECT_TRUE(ledger.entries().empty());
}

TEST_F(OwnerSessionTest, EvaluatesAndRecommendsWithTheFinalModel) {
  dp::PrivacyLedger ledger(100, 1e-5);
  auto owner = Owner(0, &ledger);
  ASSERT_NE(owner, nullptr);
  EXPECT_EQ(owner->EvaluateTest().count, 0);
  EXPECT_THAT(owner->Recommend(0, 3, false), StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_THAT(owner->Finish(model_), IsOk());
  EXPECT_EQ(owner->phase(), OwnerSession::Phase::kFinished);
  EXPECT_EQ(owner->EvaluateTest().count, static_cast<int64_t>(test_.size()));
  EXPECT_THAT(owner->RunStep(0, model_), StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_OK_AND_ASSIGN(auto recs, owner->Recommend(0, 3, false));
  ASSERT_EQ(recs.size(), 3u);
  for (const auto& [item, score] : recs) {
    for (const auto* ratings : {&train_, &test_}) {
      for (const data::Rating& r : *ratings) EXPECT_FALSE(r.user == 0 && r.item == item);
    }
    EXPECT_GE(score, 1.0);
    EXPECT_LE(score, 5.0);
  }
  EXPECT_GE((recs)[0].second, (recs)[2].second);
  // A user of another owner: this owner does not answer for it.
  EXPECT_THAT(owner->Recommend(8, 3, false), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(OwnerSessionTest, RefusesRatingsOutsideTheModel) {
  dp::PrivacyLedger ledger(100, 1e-5);
  std::vector<data::Rating> bad = train_;
  bad.push_back({kUsers, 0, 3.0f});
  EXPECT_THAT(OwnerSession::Create(TermsWith(1.0), *layout_, bad, test_, &ledger,
                                   random::Csprng::FromSeed(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("training")));
}

}  // namespace
}  // namespace fedmf::coupling
