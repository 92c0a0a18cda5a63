#include "common/lfl/wire/lfl_job_codec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::net {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

LflJobConfig Job() {
  LflJobConfig j;
  j.job_id = "j";
  j.config.iterations = 2;
  j.config.dim = 4;
  j.config.omega = 0.3;
  j.config.epsilon = 1;
  j.config.delta = 1e-5;
  j.config.device.dim = 4;
  j.config.device.rating_max = 5;
  j.config.test_fraction = 0.1;
  j.num_items = 20;
  for (int h = 0; h < 2; ++h) {
    v1::DeviceGrant g;
    g.set_host(h == 0 ? "a" : "b");
    g.set_first_device(static_cast<uint64_t>(h) * 50);
    g.set_count(50);
    j.grants.push_back(g);
  }
  return j;
}

TEST(LflJobCodecTest, DesignDropoutDefaultsToOmegaAndRoundTrips) {
  absl::StatusOr<LflJobConfig> dflt = LflJobFromSpec(SpecFromLflJob(Job()));
  ASSERT_THAT(dflt, IsOk());
  EXPECT_DOUBLE_EQ(SecAggDesignDropout(*dflt), 0.3);
  EXPECT_EQ(SpecFromLflJob(*dflt).lfl().secagg_design_dropout(), 0.0);  // omega: not on the wire

  LflJobConfig j = Job();
  j.secagg_design_dropout = 0.1;
  const v1::JobSpec spec = SpecFromLflJob(j);
  EXPECT_DOUBLE_EQ(spec.lfl().secagg_design_dropout(), 0.1);
  absl::StatusOr<LflJobConfig> back = LflJobFromSpec(spec);
  ASSERT_THAT(back, IsOk());
  EXPECT_DOUBLE_EQ(SecAggDesignDropout(*back), 0.1);
  EXPECT_DOUBLE_EQ(back->config.omega, 0.3);  // DP calibration and skip rule unchanged
}

TEST(LflJobCodecTest, DesignDropoutAboveOmegaOrNegativeIsRefusedNamingTheField) {
  for (double bad : {0.31, -0.1, 1.0}) {
    SCOPED_TRACE(bad);
    v1::JobSpec spec = SpecFromLflJob(Job());
    spec.mutable_lfl()->set_secagg_design_dropout(bad);
    EXPECT_THAT(LflJobFromSpec(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                               AllOf(HasSubstr("lfl.secagg_design_dropout"),
                                                     HasSubstr("(0, omega = 0.3]"))));
  }
}

TEST(LflJobCodecTest, GradientAlgorithmAndClipNormRoundTripAndAreChecked) {
  for (bool whole : {true, false}) {
    LflJobConfig j = Job();
    j.config.device.whole_gradient = whole;
    j.config.device.clip_norm = 2.5;
    absl::StatusOr<LflJobConfig> back = LflJobFromSpec(SpecFromLflJob(j));
    ASSERT_THAT(back.status(), IsOk());
    EXPECT_EQ(back->config.device.whole_gradient, whole);
    EXPECT_DOUBLE_EQ(back->config.device.clip_norm, 2.5);
    EXPECT_DOUBLE_EQ(back->config.device.GradientNormBound(), 2.5);
  }
  v1::JobSpec spec = SpecFromLflJob(Job());
  spec.mutable_lfl()->set_clip_norm(-1);
  EXPECT_THAT(LflJobFromSpec(spec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("clip_norm")));
}

}  // namespace
}  // namespace fedmf::net
