#include "common/fmf/job_config.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "common/fmf/noise_plan.h"
#include "common/mf/clipping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::fmf {
namespace {

JobConfig Hfl() {
  JobConfig c;
  c.setting = Setting::kHfl;
  c.split = SplitKind::kHorizontal;
  return c;
}

TEST(JobConfigTest, DefaultsAreValid) { EXPECT_TRUE(ValidateJobConfig(Hfl()).ok()); }

TEST(JobConfigTest, ErrorsNameTheField) {
  struct Case {
    void (*mutate)(JobConfig&);
    const char* field;
  };
  const Case cases[] = {
      {[](JobConfig& c) { c.rounds = 0; }, "rounds"},
      {[](JobConfig& c) { c.local_iters = 0; }, "local_iters"},
      {[](JobConfig& c) { c.dim = 0; }, "dim"},
      {[](JobConfig& c) { c.sample_rate = 0; }, "sample_rate"},
      {[](JobConfig& c) { c.sample_rate = 1.5; }, "sample_rate"},
      {[](JobConfig& c) { c.epsilon = 0; }, "epsilon"},
      {[](JobConfig& c) { c.delta = 1; }, "delta"},
      {[](JobConfig& c) { c.theta = -1; }, "theta"},
      {[](JobConfig& c) { c.rating_max = 0; }, "rating_max"},
      {[](JobConfig& c) { c.split = SplitKind::kVertical; }, "split"},
      {[](JobConfig& c) { c.job_id = ""; }, "job_id"},
      {[](JobConfig& c) { c.grid_learning_rate = 0; }, "grid_learning_rate"},
      {[](JobConfig& c) { c.grid_learning_rate = std::nan(""); }, "grid_learning_rate"},
  };
  for (const Case& k : cases) {
    JobConfig c = Hfl();
    k.mutate(c);
    absl::Status s = ValidateJobConfig(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << k.field;
    EXPECT_NE(s.message().find(k.field), std::string::npos) << s.message();
  }
}

TEST(JobConfigTest, HflRefusesPerRatingPrivacy) {
  for (Setting setting : {Setting::kHfl, Setting::kHflSynSgd}) {
    JobConfig c = Hfl();
    c.setting = setting;
    EXPECT_EQ(c.granularity, Granularity::kUser);  // the default is the valid one
    EXPECT_EQ(DefaultGranularity(setting), Granularity::kUser);
    c.granularity = Granularity::kRating;
    absl::Status s = ValidateJobConfig(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    // Names the field, the setting, why, and the fix.
    for (const char* part : {"'granularity'", "per-rating privacy is not available",
                             "Stage 1 pre-trains", "--granularity user"}) {
      EXPECT_NE(s.message().find(part), std::string::npos) << part << ": " << s.message();
    }
    EXPECT_NE(s.message().find(SettingName(setting)), std::string::npos) << s.message();
    EXPECT_THAT(PlanNoise(c), StatusIs(absl::StatusCode::kInvalidArgument));
    // Without noise nothing is claimed, so nothing to refuse.
    c.epsilon = std::numeric_limits<double>::infinity();
    EXPECT_THAT(ValidateJobConfig(c), IsOk());
  }
  // VFL and DP local-only keep per rating (no noise-free stage feeds their
  // releases), and per rating stays their default.
  JobConfig v;
  v.setting = Setting::kVfl;
  v.split = SplitKind::kVertical;
  v.granularity = Granularity::kRating;
  EXPECT_THAT(ValidateJobConfig(v), IsOk());
  EXPECT_EQ(DefaultGranularity(Setting::kVfl), Granularity::kRating);
  EXPECT_EQ(DefaultGranularity(Setting::kLocal), Granularity::kRating);
  EXPECT_TRUE(GranularityRefusal(Setting::kHfl, Granularity::kUser).empty());
}

TEST(JobConfigTest, ParsesNames) {
  EXPECT_EQ(*ParseSetting("hfl-synsgd"), Setting::kHflSynSgd);
  EXPECT_EQ(SettingName(Setting::kVfl), "vfl");
  EXPECT_THAT(ParseSetting("lfl2"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(*ParseGranularity("user"), Granularity::kUser);
  EXPECT_THAT(ParseGranularity("item"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(*ParseEngine("grid"), Engine::kGrid);
  EXPECT_EQ(*ParseEngine("sgd"), Engine::kSgd);
  EXPECT_EQ(EngineName(Engine::kGrid), "grid");
  EXPECT_EQ(EngineName(Engine::kSgd), "sgd");
  const absl::Status bad = ParseEngine("als").status();
  EXPECT_NE(bad.message().find("use sgd or grid"), std::string::npos) << bad.message();
}

TEST(JobConfigTest, SynSgdSynchronizesEveryIteration) {
  JobConfig c = Hfl();
  c.setting = Setting::kHflSynSgd;
  EXPECT_EQ(c.EffectiveRounds(), 1000);
  EXPECT_EQ(c.EffectiveLocalIters(), 1);
  EXPECT_EQ(c.ChargedSteps(), 1000);
}

TEST(JobConfigTest, VflChargesKappaOnlyForThePapersDpFinish) {
  JobConfig c;
  c.setting = Setting::kVfl;
  c.split = SplitKind::kVertical;
  c.vfl_finetune_iters = 50;
  c.algorithm = Algorithm::kPaper;
  EXPECT_FALSE(c.VflLocalFinish());
  EXPECT_EQ(c.ChargedSteps(), 1050);
  // The default finishes with the party's own noise-free refit: kappa is
  // neither run nor charged.
  c.algorithm = JobConfig{}.algorithm;
  EXPECT_TRUE(c.VflLocalFinish());
  EXPECT_EQ(c.ChargedSteps(), 1000);
  // DP local-only on a vertical split keeps its kappa steps whatever the
  // algorithm: it is the paper's VFL baseline.
  c.setting = Setting::kLocal;
  EXPECT_FALSE(c.VflLocalFinish());
  EXPECT_EQ(c.ChargedSteps(), 1050);
  EXPECT_EQ(c.EffectiveTheta(), 5);
  EXPECT_EQ(Hfl().EffectiveTheta(), 10);
}

TEST(NoisePlanTest, CalibratesWithTheAccountant) {
  JobConfig c = Hfl();
  c.algorithm = Algorithm::kPaper;  // the paper's trimming bound
  c.epsilon = 1.0;
  ASSERT_OK_AND_ASSIGN(auto plan, PlanNoise(c));
  EXPECT_TRUE(plan.private_training);
  EXPECT_EQ(plan.steps, 1000);
  ASSERT_OK_AND_ASSIGN(auto z_alone, dp::CalibrateNoiseMultiplier(0.01, 1000, 1e-5, 1.0));
  // The size release takes a small share: the steps need a little more noise
  // than alone (1.541 vs 1.513 here), and the composition of both meets 1.
  const double z = plan.noise_multiplier;
  EXPECT_GT(z, z_alone);
  EXPECT_LT(z, 1.03 * z_alone);
  EXPECT_GT(plan.count_noise_multiplier, 5 * z);
  dp::RdpAccountant both;
  both.AddSteps(0.01, z, 1000);
  both.AddSteps(1.0, plan.count_noise_multiplier, 1);
  ASSERT_OK_AND_ASSIGN(auto eps, both.GetEpsilon(1e-5));
  EXPECT_DOUBLE_EQ(plan.epsilon, eps.epsilon);
  EXPECT_LE(plan.epsilon, 1.0 + 1e-9);
  EXPECT_GT(plan.epsilon, 0.99);
  // Per user, the paper's algorithm: Delta scaled by theta = 10, the count's too.
  EXPECT_EQ(plan.theta, 10);
  EXPECT_DOUBLE_EQ(plan.sigma_one, z * 10 * mf::SensitivityOneMatrix(5.0));
  EXPECT_DOUBLE_EQ(plan.sigma_both, z * 10 * mf::SensitivityBothMatrices(5.0));
  EXPECT_EQ(plan.count_sensitivity, 10);
  EXPECT_DOUBLE_EQ(plan.count_sigma, plan.count_noise_multiplier * 10);
}

// The default HFL algorithm clips each user's whole gradient at
// kDefaultHflClip: same z and epsilon as the paper's, Delta = C, the count of
// users with sensitivity 1. -1 resolves per algorithm; an explicit 0 trims.
TEST(NoisePlanTest, DefaultHflAlgorithmClipsPerUser) {
  JobConfig c = Hfl();
  c.epsilon = 1.0;
  ASSERT_EQ(c.algorithm, Algorithm::kAlternate);
  EXPECT_EQ(c.EffectiveClipNorm(), kDefaultHflClip);
  ASSERT_OK_AND_ASSIGN(auto plan, PlanNoise(c));
  JobConfig paper = c;
  paper.algorithm = Algorithm::kPaper;
  EXPECT_EQ(paper.EffectiveClipNorm(), 0.0);
  ASSERT_OK_AND_ASSIGN(auto trimmed, PlanNoise(paper));
  EXPECT_DOUBLE_EQ(plan.noise_multiplier, trimmed.noise_multiplier);
  EXPECT_DOUBLE_EQ(plan.epsilon, trimmed.epsilon);
  EXPECT_EQ(plan.theta, 0);
  EXPECT_EQ(plan.clip_norm, kDefaultHflClip);
  EXPECT_DOUBLE_EQ(plan.sigma_one, plan.noise_multiplier * kDefaultHflClip);
  EXPECT_EQ(plan.count_sensitivity, 1);
  c.clip_norm = 0;  // alternate with the paper's trimming
  EXPECT_FALSE(c.UserClipped());
  c.clip_norm = -2;
  EXPECT_THAT(ValidateJobConfig(c), StatusIs(absl::StatusCode::kInvalidArgument));
  JobConfig vfl = c;
  vfl.setting = Setting::kVfl;
  vfl.split = SplitKind::kVertical;
  vfl.granularity = Granularity::kRating;
  vfl.clip_norm = -1;
  EXPECT_EQ(vfl.EffectiveClipNorm(), 0.0);  // VFL never clips per user
  EXPECT_THAT(ValidateJobConfig(vfl), IsOk());
}

TEST(NoisePlanTest, PerUserScalesSensitivityByTheta) {
  JobConfig c = Hfl();
  c.setting = Setting::kVfl;  // HFL refuses per rating; VFL offers both
  c.split = SplitKind::kVertical;
  c.granularity = Granularity::kRating;
  auto rating = PlanNoise(c);
  c.granularity = Granularity::kUser;
  auto user = PlanNoise(c);
  ASSERT_TRUE(rating.ok() && user.ok());
  EXPECT_EQ(user->theta, 5);
  EXPECT_DOUBLE_EQ(user->noise_multiplier, rating->noise_multiplier);
  EXPECT_NEAR(user->sigma_one, 5 * rating->sigma_one, 1e-9);
  EXPECT_NEAR(user->sigma_both, 5 * rating->sigma_both, 1e-9);
}

TEST(NoisePlanTest, NonPrivateSettingsAddNoNoise) {
  JobConfig c = Hfl();
  c.epsilon = std::numeric_limits<double>::infinity();
  ASSERT_OK_AND_ASSIGN(auto plan, PlanNoise(c));
  EXPECT_FALSE(plan.private_training);
  EXPECT_EQ(plan.sigma_one, 0);
  JobConfig central;
  central.setting = Setting::kCentral;
  central.split = SplitKind::kNone;
  EXPECT_FALSE(PlanNoise(central)->private_training);
}

}  // namespace
}  // namespace fedmf::fmf

namespace fedmf::fmf {
namespace {

JobConfig Coupling() {
  JobConfig c;
  c.setting = Setting::kCoupling;
  c.split = SplitKind::kHorizontal;
  c.granularity = Granularity::kRating;
  c.local_iters = 1;
  c.rounds = 2000;
  c.epsilon = 2.78;
  return c;
}

TEST(JobConfigTest, CouplingRulesNameTheField) {
  EXPECT_THAT(ValidateJobConfig(Coupling()), IsOk());
  EXPECT_EQ(ParseSetting("coupling").value(), Setting::kCoupling);
  EXPECT_EQ(SettingName(Setting::kCoupling), "coupling");
  EXPECT_EQ(DefaultGranularity(Setting::kCoupling), Granularity::kRating);
  EXPECT_DOUBLE_EQ(Coupling().EffectiveClipNorm(), 1.0 / 6);
  EXPECT_DOUBLE_EQ(Coupling().EffectiveLearningRate(), kDefaultCouplingLearningRate);
  auto refused = [](const std::function<void(JobConfig&)>& tweak, const std::string& field) {
    JobConfig c = Coupling();
    tweak(c);
    const absl::Status s = ValidateJobConfig(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_NE(s.message().find(absl::StrCat("'", field, "'")), std::string::npos) << s;
  };
  refused([](JobConfig& c) { c.local_iters = 10; }, "local_iters");
  refused([](JobConfig& c) { c.granularity = Granularity::kUser; }, "granularity");
  refused([](JobConfig& c) { c.split = SplitKind::kVertical; }, "split");
  refused([](JobConfig& c) { c.clip_norm = 0; }, "clip_norm");
  refused([](JobConfig& c) { c.coupling_bound = 0; }, "coupling_bound");
  refused([](JobConfig& c) { c.coupling_zeta = -1; }, "coupling_zeta");
  refused([](JobConfig& c) { c.coupling_init = 2; }, "coupling_init");
}

// One Poisson-subsampled Gaussian step per round at sensitivity C, no size
// release: z is the accountant's for (q, T, delta, epsilon) alone.
TEST(NoisePlanTest, CouplingCalibratesItsStepsAlone) {
  ASSERT_OK_AND_ASSIGN(auto plan, PlanNoise(Coupling()));
  ASSERT_OK_AND_ASSIGN(auto z, dp::CalibrateNoiseMultiplier(0.01, 2000, 1e-5, 2.78));
  EXPECT_DOUBLE_EQ(plan.noise_multiplier, z);
  EXPECT_EQ(plan.steps, 2000);
  EXPECT_EQ(plan.count_noise_multiplier, 0);
  EXPECT_DOUBLE_EQ(plan.clip_norm, 1.0 / 6);
  EXPECT_DOUBLE_EQ(plan.sigma_one, z / 6);
  EXPECT_LE(plan.epsilon, 2.78 + 1e-9);
  EXPECT_GT(plan.epsilon, 2.7);
}

}  // namespace
}  // namespace fedmf::fmf
