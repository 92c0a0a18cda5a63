#include "common/fmf/wire/job_codec.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::net {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

fmf::JobConfig Hfl() {
  fmf::JobConfig c;
  c.job_id = "j";
  c.setting = fmf::Setting::kHfl;
  c.split = fmf::SplitKind::kHorizontal;
  return c;
}

TEST(JobCodecTest, HflAlgorithmAndClipNormRoundTrip) {
  fmf::JobConfig c = Hfl();
  c.algorithm = fmf::Algorithm::kAlternate;
  c.alternations = 7;
  c.validation_fraction = 0.2;
  c.max_finetune_epochs = 30;
  c.clip_norm = 12.5;
  const v1::JobSpec spec = SpecFromJobConfig(c);
  EXPECT_EQ(spec.algorithm(), "alternate");
  ASSERT_OK_AND_ASSIGN(auto back, JobConfigFromSpec(spec));
  EXPECT_EQ(back.algorithm, fmf::Algorithm::kAlternate);
  EXPECT_EQ(back.alternations, 7);
  EXPECT_EQ(back.validation_fraction, 0.2);
  EXPECT_EQ(back.max_finetune_epochs, 30);
  EXPECT_EQ(back.clip_norm, 12.5);
  EXPECT_TRUE(back.UserClipped());
}

TEST(JobCodecTest, CouplingRoundTripsAndUnsetFieldsTakeTheDefaults) {
  fmf::JobConfig c = Hfl();
  c.setting = fmf::Setting::kCoupling;
  c.granularity = fmf::Granularity::kRating;
  c.local_iters = 1;
  c.rounds = 300;
  c.coupling_zeta = 0;  // a real value, not "unset"
  c.coupling_bound = 0.5;
  c.coupling_init = 0.01;
  c.clip_norm = 0.2;
  const v1::JobSpec spec = SpecFromJobConfig(c);
  EXPECT_EQ(spec.setting(), v1::SETTING_COUPLING);
  ASSERT_OK_AND_ASSIGN(auto back, JobConfigFromSpec(spec));
  EXPECT_EQ(back.setting, fmf::Setting::kCoupling);
  EXPECT_EQ(back.split, fmf::SplitKind::kHorizontal);
  EXPECT_EQ(back.rounds, 300);
  EXPECT_EQ(back.coupling_zeta, 0);
  EXPECT_EQ(back.coupling_bound, 0.5);
  EXPECT_EQ(back.coupling_init, 0.01);
  EXPECT_EQ(back.EffectiveClipNorm(), 0.2);
  v1::JobSpec bare = spec;
  bare.clear_coupling_zeta();
  bare.clear_coupling_bound();
  bare.clear_coupling_init();
  bare.set_clip_norm(0);
  ASSERT_OK_AND_ASSIGN(auto defaults, JobConfigFromSpec(bare));
  const fmf::JobConfig fresh;
  EXPECT_EQ(defaults.coupling_zeta, fresh.coupling_zeta);
  EXPECT_EQ(defaults.coupling_bound, fresh.coupling_bound);
  EXPECT_EQ(defaults.coupling_init, fresh.coupling_init);
  EXPECT_EQ(defaults.EffectiveClipNorm(), fmf::kDefaultCouplingClip);
  v1::JobSpec per_user = spec;
  per_user.set_granularity(v1::GRANULARITY_USER);
  EXPECT_THAT(JobConfigFromSpec(per_user),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("granularity")));
}

TEST(JobCodecTest, AnEmptyAlgorithmIsTheDefault) {
  v1::JobSpec spec = SpecFromJobConfig(Hfl());
  // The resolved clip norm travels (SpecFromJobConfig): the default's 3.
  EXPECT_EQ(spec.clip_norm(), fmf::kDefaultHflClip);
  spec.clear_algorithm();
  spec.clear_alternations();
  spec.clear_clip_norm();
  ASSERT_OK_AND_ASSIGN(auto back, JobConfigFromSpec(spec));
  EXPECT_EQ(back.algorithm, fmf::JobConfig().algorithm);
  EXPECT_EQ(back.alternations, fmf::JobConfig().alternations);
  EXPECT_EQ(back.clip_norm, 0.0);
}

TEST(JobCodecTest, BadHflFieldsAreRefusedByName) {
  v1::JobSpec spec = SpecFromJobConfig(Hfl());
  spec.set_algorithm("fancy");
  EXPECT_THAT(JobConfigFromSpec(spec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("field 'algorithm'"), HasSubstr("fancy"))));
  spec = SpecFromJobConfig(Hfl());
  spec.set_clip_norm(-2);
  EXPECT_THAT(JobConfigFromSpec(spec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'clip_norm'")));
  fmf::JobConfig vfl = Hfl();
  vfl.setting = fmf::Setting::kVfl;
  vfl.split = fmf::SplitKind::kVertical;
  vfl.granularity = fmf::Granularity::kRating;
  spec = SpecFromJobConfig(vfl);
  spec.set_clip_norm(3);
  EXPECT_THAT(JobConfigFromSpec(spec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("'clip_norm'"), HasSubstr("hfl"))));
}

}  // namespace
}  // namespace fedmf::net
